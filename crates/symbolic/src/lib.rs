//! moss-symbolic
