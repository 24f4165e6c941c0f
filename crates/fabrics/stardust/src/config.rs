//! The resolved parameters of Fabric Adapters and Fabric Elements, as the state machines take
//! them (the scenario layer fills them from the `[stardust]` table and checks them).

use shoal_base::{Dur, Rate};

/// At most this many traffic classes (VOQs per destination port).
pub const MAX_CLASSES: usize = 8;

/// How an egress scheduler shares its credits between traffic classes; within a class it is
/// always round-robin among the VOQs that ask (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassPolicy {
    /// Class 0 first, then 1, ...
    Strict,
    /// Class `c` gets `weights[c]` credits in turn (weighted round-robin).
    Weighted([u16; MAX_CLASSES]),
}

/// How the egress credit rate reacts to FCI (§4.2: "the FCI reaches the destination Fabric
/// Adapter and throttles the credit rate"; §5.5: "the FCI mechanism is activated only when
/// the fabric is actually oversubscribed"). The paper gives no law; ours acts on a factor
/// applied to every port's credit rate of the adapter, once per window about as long as the
/// feedback loop (a credit out to a source and its cells back): a window in which a fraction
/// m of the data cells came marked cuts the factor by `decrease` x m (as DCTCP cuts its window
/// in proportion to the fraction marked), so that the rate settles where few cells are marked,
/// at the capacity the fabric has, instead of cutting on every mark; a window without marks
/// adds `increase`.
/// Fractions in 1/65,536.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FciReaction {
    /// A window's cut: the factor loses this fraction of itself times the fraction marked.
    pub decrease: u32,
    /// The window (above zero).
    pub interval: Dur,
    /// A window without a mark adds this much to the factor (up to 1).
    pub increase: u32,
    /// The factor never goes below this.
    pub min_rate: u32,
}

/// What a Fabric Adapter's ingress does when its packet buffer is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IngressFull {
    /// Drop the arriving packet (counted).
    Drop,
    /// Pause the hosts before it fills (§5.6: "the source Fabric Adapter can avoid packet loss
    /// by sending flow control messages back to the host").
    Pause,
}

/// Low-latency VOQs (§5.7: "receiving a credit will take about a microsecond, but a low
/// latency VOQ starts transmitting immediately"; "we assume a limited aggregate bandwidth of
/// all low latency VOQs"): the classes whose VOQs send without credit, each VOQ held to a rate
/// by a token bucket (ours: the paper bounds the share but gives no mechanism). Their bytes
/// still take room in the egress buffer, which slows the credits of the port's other VOQs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowLatency {
    /// Bit `c` set: class `c`'s VOQs are low-latency.
    pub classes: u8,
    /// A low-latency VOQ sends at most this rate on average ...
    pub rate: Rate,
    /// ... plus a burst of this many bytes (and the packet that crosses it).
    pub burst_bytes: u32,
}

impl LowLatency {
    /// No low-latency class.
    pub const NONE: LowLatency = LowLatency {
        classes: 0,
        rate: Rate(0),
        burst_bytes: 0,
    };

    pub fn is(&self, class: u8) -> bool {
        self.classes >> class & 1 == 1
    }
}

/// Everything a Fabric Adapter needs to know; the same for every adapter of a fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdapterConfig {
    pub fas: u32,
    /// Host ports per adapter (destination ports).
    pub ports: u16,
    pub classes: u8,
    pub port_rate: Rate,
    pub credit_bytes: u32,
    /// Credits go at the port rate times 1 + this / 10^6.
    pub credit_speedup_ppm: u32,
    /// A data cell on a fabric link, header included.
    pub cell_bytes: u32,
    pub cell_header_bytes: u32,
    /// A control cell on a fabric link.
    pub control_bytes: u32,
    /// Egress buffer per port: reassembly plus the port's queue.
    pub egress_buffer_bytes: u64,
    /// Ingress packet buffer of the whole adapter.
    pub ingress_buffer_bytes: u64,
    pub ingress_full: IngressFull,
    pub reassembly_timeout: Dur,
    /// A VOQ unanswered asks again after the reassembly timeout, then after twice as long,
    /// and so on, up to 2^this times it (0: after every timeout); a new request starts over.
    pub status_refresh_doublings: u32,
    /// An empty VOQ keeps up to one credit's worth of unspent credit this long after its last
    /// status (zero: it returns it at once); shorter than the reassembly timeout, which is
    /// the scheduler's write-off hold.
    pub credit_keep: Dur,
    pub class_policy: ClassPolicy,
    pub fci: FciReaction,
    /// The spraying permutation is replaced every this many rounds.
    pub permutation_rounds: u32,
    pub low_latency: LowLatency,
}

impl AdapterConfig {
    /// How long a VOQ that has asked again `refreshes` times since its request waits, after
    /// its last status or credit, before asking again: the reassembly timeout (the scale on
    /// which a cell counts as lost), doubled after each refresh up to
    /// `status_refresh_doublings` times. Ours: the paper does not say how a request is kept
    /// alive. A fixed period made a destination serving n VOQs, each answered once per n
    /// credits of its port's time, receive n refreshes per period (44% of its link at Fig.
    /// 10(c)'s n = 431); a lost "on" (the one loss a refresh repairs: a scheduler that has a
    /// VOQ on keeps crediting it) is still asked again one period after the request.
    pub fn refresh_wait(&self, refreshes: u8) -> Dur {
        let d = u32::from(refreshes).min(self.status_refresh_doublings);
        Dur(self.reassembly_timeout.0.saturating_mul(1 << d))
    }

    /// Payload a data cell holds.
    pub fn cell_payload(&self) -> u32 {
        self.cell_bytes - self.cell_header_bytes
    }

    /// The credit generation rate of one port at full factor.
    pub fn credit_rate(&self) -> Rate {
        Rate(
            (self.port_rate.0 as u128 * (1_000_000 + self.credit_speedup_ppm as u128) / 1_000_000)
                as u64,
        )
    }

    /// VOQ (or egress stream) index of destination port `port` of adapter `fa`, class `class`.
    pub fn queue_index(&self, fa: u32, port: u16, class: u8) -> usize {
        (fa as usize * self.ports as usize + port as usize) * self.classes as usize + class as usize
    }

    /// The (adapter, port, class) of queue index `q` ([`AdapterConfig::queue_index`]).
    pub fn voq_of(&self, q: usize) -> (u32, u16, u8) {
        let classes = self.classes as usize;
        let ports = self.ports as usize;
        let class = (q % classes) as u8;
        let port = (q / classes % ports) as u16;
        let fa = (q / classes / ports) as u32;
        (fa, port, class)
    }
}

/// A Fabric Element's parameters, in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementConfig {
    /// Data cells the shared pool holds; a cell arriving at a full pool is dropped (counted).
    pub pool_cells: u32,
    /// A data cell leaving an output queue that holds more than this carries FCI.
    pub fci_threshold: u32,
    /// The element pauses its upstream links when its pool holds this many cells ...
    pub pause_cells: u32,
    /// ... and releases them when it is back at this many.
    pub resume_cells: u32,
    pub permutation_rounds: u32,
}
