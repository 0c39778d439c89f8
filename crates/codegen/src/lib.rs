//! moss-codegen
