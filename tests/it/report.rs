//! report.html rendered in headless Chromium (being written).
