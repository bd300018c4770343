//! Incremental scaling: smallest topologies first, up to a confident size. Not yet implemented.
