//! One error type for the crate. Every function that takes a caller's input (a rack size, a demand
//! matrix, SoC reports, torus dimensions) rejects impossible values here, with the reason, instead
//! of panicking.

/// Why an input was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("at least {min} SoCs are needed, but {socs} was asked for")]
    TooFewSocs { socs: usize, min: usize },
    #[error("{socs} SoCs is more than the {max} this model holds")]
    TooManySocs { socs: usize, max: usize },
    #[error("each SoC needs at least one internal port (d = 0 was asked for)")]
    NoPorts,
    #[error(
        "{ports} internal ports per SoC is more than the {max} supported \
         (one bit per crosspoint in a 64-bit mask)"
    )]
    TooManyPorts { ports: usize, max: usize },
    #[error("a rack needs at least one uplink to the data center (l = 0 was asked for)")]
    NoUplinks,
    #[error("{uplinks} uplinks for {socs} SoCs: each uplink needs a SoC of its own")]
    TooManyUplinks { uplinks: usize, socs: usize },
    #[error("the demand matrix covers {found} SoCs but {expected} were expected")]
    MatrixSize { expected: usize, found: usize },
    #[error("a demand matrix over {socs} SoCs needs {expected} entries, but {found} were given")]
    MatrixLength {
        socs: usize,
        expected: usize,
        found: usize,
    },
    #[error("SoC {soc} has demand to itself: the diagonal of a demand matrix must be zero")]
    SelfDemand { soc: usize },
    #[error("{found} demand reports for {expected} SoCs: the controller needs one per SoC")]
    ReportCount { expected: usize, found: usize },
    #[error(
        "SoC {soc} reported a byte vector of {found} entries, but the rack has {expected} SoCs"
    )]
    ReportLength {
        soc: usize,
        expected: usize,
        found: usize,
    },
    #[error("SoC {soc} is outside a graph of {socs} SoCs")]
    SocOutOfRange { soc: usize, socs: usize },
    #[error("a link from SoC {soc} to itself")]
    SelfLoop { soc: usize },
    #[error("the topology falls apart into {components} components, so some SoCs cannot talk")]
    Disconnected { components: usize },
    #[error("there is demand from SoC {src} to SoC {dst}, but no path between them")]
    Unreachable { src: usize, dst: usize },
    #[error("a torus dimension of size {size}: each needs at least 2 SoCs to avoid self-loops")]
    TorusDimension { size: usize },
    #[error(
        "no simple {degree}-regular graph on {socs} SoCs exists (needs degree < SoCs and an even degree sum)"
    )]
    NoRegularGraph { socs: usize, degree: usize },
    #[error("no connected simple {degree}-regular graph on {socs} SoCs after {attempts} attempts")]
    RegularGraphAttempts {
        socs: usize,
        degree: usize,
        attempts: usize,
    },
    #[error(
        "the two circuit plans are not of the same rack (SoCs, crosspoints or cross-circuits differ)"
    )]
    PlanMismatch,
    #[error("the configuration version is u64::MAX: no newer version exists")]
    VersionOverflow,
    #[error("a smoothing weight of {num}/{den} is not in (0, 1]")]
    Smoothing { num: u64, den: u64 },
    /// A packet-level run (the prototype on the packet engine) could not be set up or failed.
    #[error("packet-level run: {0}")]
    Packet(String),
}
