//! Slurm job arrays for sweeps (being written).
