//! moss-sim
