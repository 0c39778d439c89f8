//! moss-results
