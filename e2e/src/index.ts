// End-to-end suites and the harness that starts real components
