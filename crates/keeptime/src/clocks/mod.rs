//! Clock and timer inspection: what the machine's clocks and timers really do.
