//! The self-contained HTML report (being written).
