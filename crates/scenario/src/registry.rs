//! The fabrics a scenario can name: the one list of them. A new fabric is a crate that
//! implements [`FabricKind`] and one line here.

use shoal_fabric::FabricKind;

/// Every fabric kind, in the order `--help` and error messages list them.
pub const FABRICS: &[&dyn FabricKind] = &[
    &shoal_rack::scenario::Kind,
    &shoal_psn::scenario::Kind,
    &shoal_ideal::scenario::Kind,
    &shoal_xfabric::scenario::Kind,
    &shoal_stardust::scenario::Kind,
    &shoal_aquila::scenario::Kind,
];

/// The kind `scenario.fabric = name` selects.
pub fn find(name: &str) -> Option<&'static dyn FabricKind> {
    FABRICS.iter().copied().find(|k| k.names().contains(&name))
}

/// Every name `scenario.fabric` accepts.
pub fn names() -> impl Iterator<Item = &'static str> {
    FABRICS.iter().flat_map(|k| k.names().iter().copied())
}

/// The tables of the fabric named `name` (none for an unknown name).
pub fn tables_of(name: &str) -> &'static [&'static str] {
    find(name).map_or(&[], |k| k.tables())
}

/// Every top-level table some fabric reads.
pub fn fabric_tables() -> impl Iterator<Item = &'static str> {
    FABRICS.iter().flat_map(|k| k.tables().iter().copied())
}
