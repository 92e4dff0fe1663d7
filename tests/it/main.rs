mod check;
mod cli;
mod determinism;
mod report;
mod slurm;
mod sweep;
