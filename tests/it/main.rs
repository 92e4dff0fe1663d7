mod boundary;
mod check;
mod cli;
mod determinism;
mod pins;
mod report;
mod slurm;
mod sweep;
