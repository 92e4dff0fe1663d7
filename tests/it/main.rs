//! Integration tests (one binary, so polars is linked once).

mod check;
mod cli;
mod determinism;
