//! Startd pilots' VMs (seed 003 §2): a startd pilot holds `vms` job slots of its CE for its
//! lifetime, runs the pilot script every `pilot_interval_s`, and each run that finds a free VM
//! asks, tp' later, for a job of the kind the policy says ([`StartdPilot`]). Jobs on VMs run at
//! the rates the startd gives (a background job suspended while a foreground job runs): each
//! job's remaining work is kept here in a [`Clock`] and its end set again at every change. At
//! removal its jobs are requeued in their WMS or killed.

use super::factory::Mode;
use super::provisioner::{Factories, STARTD_FETCH, STARTD_REMOVE, STARTD_RUN};
use crate::engine::{SimDuration, SimTime};
use crate::factory::startd::{self, StartdAction, StartdPilot};
use crate::grid::PilotStatus;
use crate::ids::{PilotId, job_index};
use crate::wms::Timer;
use crate::wms::provision::{RunCtx, RunEnd};

/// A startd pilot holding its slot.
pub(super) struct Startd {
    factory: u16,
    pilot: StartdPilot,
}

/// A job on a startd pilot's VM: where it runs and its remaining work.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    vm: u16,
    /// Milliseconds of work left at rate 1, as of `since`.
    work_ms: f64,
    rate: f64,
    since: SimTime,
}

impl Factories {
    /// Free VMs of factory `i`'s startd pilots (what its standby policy sees).
    pub(super) fn idle_vms(&self, i: usize) -> u32 {
        self.startds.values().filter(|s| usize::from(s.factory) == i).map(|s| s.pilot.free_vms() as u32).sum()
    }

    /// Startd pilot `p` of factory `i` took its slot: its lifetime is drawn, its removal and
    /// first pilot script run set.
    pub(super) fn startd_started(&mut self, ctx: &mut dyn RunCtx, i: usize, p: PilotId) {
        let now = ctx.now();
        let submitted = ctx.grid().pilot(p).submitted;
        let pool = self.list[i].nodes(ctx.grid());
        let f = &mut self.list[i];
        let Mode::Startd { settings, standby, lifetime } = &mut f.mode else { return };
        // Tsw is the batch system's latency: a pilot that also waited for a vacancy in a full
        // pool would teach the controller its own backlog.
        if f.running < pool {
            standby.observe_queue_wait(now - submitted);
        }
        let life = startd::draw_lifetime(lifetime, &mut f.rng);
        let limit = ctx.grid().walltime_limit(p);
        let life = life.min(limit - now);
        let Ok(pilot) = StartdPilot::new(settings.clone(), now, life) else {
            ctx.violation(format!("startd pilot {p}: bad settings"));
            return;
        };
        let (run, removal) = (pilot.next_pilot_run(), pilot.removal_at());
        self.startds.insert(p, Startd { factory: i as u16, pilot });
        ctx.set_timer(removal, Timer { kind: STARTD_REMOVE, id: p });
        if run < removal {
            ctx.set_timer(run, Timer { kind: STARTD_RUN, id: p });
        }
    }

    /// A job ended on a VM of factory `i`'s startd pilot `p` (its `clock`, taken off): the VM is
    /// free, and background jobs resume if it was the last foreground job.
    pub(super) fn startd_job_ended(&mut self, ctx: &mut dyn RunCtx, i: usize, p: PilotId, clock: Clock) {
        let now = ctx.now();
        let Some(s) = self.startds.get_mut(&p) else { return };
        match s.pilot.job_ended(now, usize::from(clock.vm)) {
            Ok((finished, actions)) => {
                self.list[i].stats.suspended_s += finished.suspended.as_secs_f64();
                self.apply_startd(ctx, i, p, &actions);
            }
            Err(e) => ctx.violation(format!("startd pilot {p}: {e}")),
        }
    }

    /// The startd pilot's script runs: it takes a free VM and asks for a job tp' later, or
    /// exits at once; the next run is set.
    pub(super) fn startd_run(&mut self, ctx: &mut dyn RunCtx, p: PilotId) {
        let now = ctx.now();
        let Some(s) = self.startds.get_mut(&p) else { return };
        let i = usize::from(s.factory);
        let action = s.pilot.pilot_run(now);
        let (next, removal) = (s.pilot.next_pilot_run(), s.pilot.removal_at());
        if next < removal {
            ctx.set_timer(next, Timer { kind: STARTD_RUN, id: p });
        }
        let f = &mut self.list[i];
        f.stats.pilot_runs += 1;
        match action {
            Ok(StartdAction::RequestJob { vm, .. }) => {
                let at = now + f.steps.0;
                ctx.set_timer(at, Timer { kind: STARTD_FETCH + vm as u16, id: p });
            }
            Ok(_) => f.stats.empty_pilot_runs += 1,
            Err(e) => ctx.violation(format!("startd pilot {p}: {e}")),
        }
    }

    /// The pilot script run for `vm` asks the WMS for a job of the kind the startd wants; the
    /// job starts on the VM (its fetch tpw' counted in its run).
    pub(super) fn startd_fetch(&mut self, ctx: &mut dyn RunCtx, p: PilotId, vm: usize) {
        let now = ctx.now();
        let Some(s) = self.startds.get(&p) else { return };
        if s.pilot.is_removed() || ctx.grid().pilot(p).status != PilotStatus::Running {
            return;
        }
        let i = usize::from(s.factory);
        let request = match s.pilot.vms().get(vm) {
            Some(startd::Vm::Fetching(r)) => *r,
            _ => return,
        };
        let only = match request {
            startd::JobRequest::Any => None,
            startd::JobRequest::Only(k) => Some(k),
        };
        let job = self.fetch(ctx, i, p, 1, only);
        let kind = job.map(|j| ctx.streams()[ctx.jobs()[job_index(j)].stream as usize].kind);
        let s = self.startds.get_mut(&p).expect("checked above");
        let fetched = s.pilot.job_fetched(now, vm, job.zip(kind));
        let f = &mut self.list[i];
        let Some(j) = job else {
            f.stats.empty_fetches += 1;
            return;
        };
        let actions = match fetched {
            Ok(a) => a,
            Err(e) => {
                ctx.violation(format!("startd pilot {p}: {e}"));
                return;
            }
        };
        if !ctx.start_run(p, j, RunEnd::Managed) {
            return;
        }
        f.stats.jobs_started += 1;
        let c = ctx.grid().pilot(p).ce;
        let power = ctx.grid().ces[c as usize].cpu_power;
        let work = f.steps.1 + SimDuration::from_secs_f64(ctx.jobs()[job_index(j)].cpu_work / power);
        let clock = Clock { vm: vm as u16, work_ms: work.as_millis() as f64, rate: 0.0, since: now };
        self.clocks.insert(j, clock);
        self.apply_startd(ctx, i, p, &actions);
    }

    /// Apply what the startd decided (suspensions change only rates; a preempted job is
    /// requeued), then set the ends of every job on its VMs again from their new rates.
    fn apply_startd(&mut self, ctx: &mut dyn RunCtx, i: usize, p: PilotId, actions: &[StartdAction]) {
        for a in actions {
            match *a {
                StartdAction::Suspend { .. } => self.list[i].stats.suspensions += 1,
                StartdAction::Preempt { job, suspended, .. } | StartdAction::Requeue { job, suspended, .. } => {
                    self.count_busy(ctx, i, job);
                    let stats = &mut self.list[i].stats;
                    stats.suspended_s += suspended.as_secs_f64();
                    stats.jobs_requeued += 1;
                    if matches!(a, StartdAction::Preempt { .. }) {
                        stats.preemptions += 1;
                    }
                    self.clocks.remove(&job);
                    ctx.requeue_job(p, job);
                }
                StartdAction::Kill { job, suspended, .. } => {
                    self.count_busy(ctx, i, job);
                    self.list[i].stats.suspended_s += suspended.as_secs_f64();
                    self.clocks.remove(&job);
                    self.list[i].stats.jobs_failed += 1;
                    ctx.kill_job(p, job);
                }
                StartdAction::Resume { .. }
                | StartdAction::CancelFetch { .. }
                | StartdAction::EmptyPilotRun
                | StartdAction::RequestJob { .. } => {}
            }
        }
        let Some(s) = self.startds.get(&p) else { return };
        if s.pilot.is_removed() {
            return;
        }
        let now = ctx.now();
        for r in s.pilot.rates() {
            let Some(c) = self.clocks.get_mut(&r.job) else { continue };
            if c.rate == r.rate {
                continue;
            }
            c.work_ms = (c.work_ms - c.rate * (now.as_millis() - c.since.as_millis()) as f64).max(0.0);
            c.since = now;
            c.rate = r.rate;
            if r.rate > 0.0 {
                let at = now + SimDuration::from_millis((c.work_ms / r.rate).ceil() as u64);
                ctx.set_job_end(r.job, at);
            } else {
                ctx.void_job_end(r.job);
            }
        }
    }

    /// The batch system removes the startd pilot: its jobs are requeued or killed, then it ends.
    pub(super) fn startd_remove(&mut self, ctx: &mut dyn RunCtx, p: PilotId) {
        let now = ctx.now();
        let Some(s) = self.startds.get_mut(&p) else { return };
        let i = usize::from(s.factory);
        let actions = match s.pilot.remove(now) {
            Ok(a) => a,
            Err(e) => {
                ctx.violation(format!("startd pilot {p}: {e}"));
                return;
            }
        };
        self.apply_startd(ctx, i, p, &actions);
        self.startds.remove(&p);
        self.list[i].stats.removals += 1;
        // Jobs that ended at this very instant were taken off already; what is left is none.
        if ctx.grid().pilot(p).running.is_empty() {
            ctx.end_pilot(p);
        } else {
            ctx.violation(format!("startd pilot {p} removed with jobs the startd did not know"));
        }
    }
}
