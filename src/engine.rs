//! The SPIN engine: `spin -a`, the C compiler, `pan`, trail replay. Not yet implemented.
