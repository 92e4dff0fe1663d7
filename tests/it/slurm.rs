//! End-to-end sweep on a real single-node Slurm cluster (being written).
