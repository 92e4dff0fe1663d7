//! Integration tests (one binary, so polars is linked once).

mod cli;
mod determinism;
