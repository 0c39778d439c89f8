//! moss-frontend
