//! Table-based Dragonfly routing (§3.2): candidate output ports per hop, the virtual-channel
//! level of each hop, and the choice among candidates for each of the four routing modes.
//!
//! A TiN's table is indexed by what the paper's SDN flows match on (§4.2): the input port's
//! class (endpoint, local, global), the VC the cell arrived on, and the destination. The VC
//! encodes the cell's *level*: how far it is along its route. With 10 traffic classes and 3
//! levels each, VC = class · 3 + level; VCs 30 and 31 are the paper's two escape VCs, shared
//! by every class, which the SDN's tables use only once a removed link leaves a cell no route
//! on its class's VCs (`crate::escape`: levels [`ESCAPE_UP`] and [`ESCAPE_DOWN`]).
//!
//! # Routes
//!
//! From TiN `x` in pod `P` towards TiN `d` in pod `Q`:
//! - **minimal**, `P ≠ Q`: `x`'s own global links to `Q` if it has any, otherwise the local
//!   links to the TiNs of `P` that have one ("holders"); then in `Q` the local links to `d`. At
//!   full scale that is 2 holders × 2 parallel local links × 2 local links to `d`: the paper's
//!   eight minimal routes.
//! - **minimal**, `P = Q`: the local links to `d`.
//! - **non-minimal** (only at the source TiN, for a cell just injected): when `P ≠ Q`, `x`'s
//!   global links to pods other than `Q` and its local links to TiNs that hold no link to `Q`;
//!   such a TiN, reached at level 0 over a local link, continues over any of its global links
//!   (a *detour*), and from the intermediate pod the cell routes minimally. When `P = Q`, the
//!   local links to a third TiN `t` of the pod that the turn rule allows. At full scale this
//!   gives 26-28 non-minimal candidates where the paper's table lists 24; the paper samples 3
//!   of them, and so do we.
//!
//! # Deadlock freedom
//!
//! - **Levels.** A cell's level is the number of global links it has crossed: it is injected at
//!   0 and moves up by one on the hop after each global link, whatever that hop's kind. The
//!   longest route (local, global, local, global, local) uses levels 0, 0, 1, 1, 2: 3 VCs per
//!   class, as the paper says. The paper states the increment only "when moving from a global
//!   link to a local link"; that rule lets a cell cross two global links back to back at the
//!   same level (its intermediate pod's arrival TiN holds the link onward), and then the global
//!   links of three pods routing through each other form a cycle. The test
//!   `the_rule_as_the_paper_states_it_admits_a_cycle` builds that cycle; raising the level on
//!   global-to-global hops too is the smallest change that removes it, and costs no VC.
//! - **Turns inside a pod.** The only local-to-local move at one level is the intra-pod detour
//!   `x → t → d` at level 0. We allow it unless `t` is below both `x` and `d` in TiN order (no
//!   "valley"), a concrete instance of the turn rules the paper likens to the odd-even model of
//!   \[20\]: a cycle of local channels would need a closed walk, whose lowest TiN is a valley.
//!
//! `crate::cdg` builds the channel dependency graph these routes induce and checks it.
//!
//! # After the SDN removes a link
//!
//! The removed ports leave the candidate lists; a pod that held its links to another pod only
//! through them no longer counts as holding one; detours at the source no longer go through a
//! pod without a link to the destination's pod, a TiN without a global link to such a pod, or
//! (inside a pod) a TiN without a link to the destination. A cell whose lists are then both
//! empty (a minimal mode at the source, or any cell past it: the tables have no detours there)
//! takes the escape routes of `crate::escape` on VCs 30 and 31 to its destination. Only a
//! removal that would cut the clique in two is refused.

use crate::escape::Escape;
pub use crate::escape::{ESCAPE_DOWN, ESCAPE_UP};
use crate::wire::VCS;
use shoal_topology::{Dragonfly, DragonflyPort, NodeIdx, PortIdx, Topology};

/// Levels (VCs) per traffic class: §3.2's three.
pub const LEVELS: u8 = 3;
/// Traffic classes with their own VCs (§3.2).
pub const CLASSES: u8 = 10;
/// The paper's two escape VCs follow the classes' VCs.
pub const ESCAPE_VCS: u8 = 2;
const _: () = assert!((CLASSES * LEVELS + ESCAPE_VCS) as usize == VCS);
/// The longest route of the tables with every link working: local, global, local, global,
/// local.
pub const ROUTE_HOPS: u16 = 5;

/// The VC of class `class` at level `level`; the escape levels name the shared escape VCs.
pub const fn vc(class: u8, level: u8) -> u8 {
    if level < LEVELS {
        class * LEVELS + level
    } else {
        CLASSES * LEVELS + level - LEVELS
    }
}

/// The routing modes of §3.2, and Valiant's as the Dragonfly literature's reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    /// 2 of the minimal and 3 of the non-minimal candidates, compared by output queue depth.
    FullyAdaptive,
    /// 2 of the minimal candidates, compared by output queue depth.
    MinimalAdaptive,
    /// One candidate of all, chosen by a hash of the source and destination.
    Deterministic,
    /// One minimal candidate, chosen by a hash of the source and destination.
    MinimalDeterministic,
    /// Not an Aquila mode: every cell leaves its pod non-minimally, uniformly at random over
    /// the non-minimal candidates (the 2:1 worst-case bound of a Dragonfly).
    Valiant,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::FullyAdaptive,
        Mode::MinimalAdaptive,
        Mode::Deterministic,
        Mode::MinimalDeterministic,
        Mode::Valiant,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Mode::FullyAdaptive => "adaptive",
            Mode::MinimalAdaptive => "minimal-adaptive",
            Mode::Deterministic => "deterministic",
            Mode::MinimalDeterministic => "minimal-deterministic",
            Mode::Valiant => "valiant",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether a cell may leave its source non-minimally.
    pub const fn non_minimal(self) -> bool {
        matches!(
            self,
            Mode::FullyAdaptive | Mode::Deterministic | Mode::Valiant
        )
    }
}

/// How a cell entered the TiN it is at: the input port class of the routing table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InKind {
    /// From one of the TiN's own endpoints (injected).
    Endpoint,
    Local,
    Global,
}

/// When a cell's level goes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelRule {
    /// On the hop after every global link (ours: see the module docs).
    AfterEveryGlobal,
    /// Only on a global-to-local move, as §3.2 states it.
    GlobalToLocalOnly,
}

/// One way out of a TiN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Network port, or `None` to eject to the destination endpoint.
    pub port: Option<PortIdx>,
    /// Level of the cell on that port (its VC within its class).
    pub level: u8,
}

/// The candidates of one routing decision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    pub minimal: Vec<Hop>,
    pub non_minimal: Vec<Hop>,
}

/// A Dragonfly's routing tables.
pub struct Router {
    df: Dragonfly,
    /// `holders[p · pods + q]`: TiNs (in-pod index) of pod `p` with a link to pod `q`.
    holders: Vec<Vec<u32>>,
    /// `globals[x]`: `x`'s global ports and the pod each reaches, in port order.
    globals: Vec<Vec<(PortIdx, u32)>>,
    /// `far[x][p]`: the TiN and port at the other end of port `p` of `x`, and its kind.
    far: Vec<Vec<(NodeIdx, PortIdx, InKind)>>,
    rule: LevelRule,
    /// `removed[x][p]`: the SDN has removed port `p` of `x` from the tables (a failed link).
    removed: Vec<Vec<bool>>,
    /// The escape tables, built at the first removal (none while every link works).
    escape: Option<Escape>,
    /// The routing VCs' candidate ports precomputed for the tables with every link working
    /// (used while `escape` is `None`; a removal prunes the lists, which are then computed
    /// per head, as rarely as failures happen).
    lists: Lists,
}

/// A run of ports in [`Lists::ports`].
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    start: u32,
    len: u32,
}

/// What [`Router::routing_candidates`] builds, precomputed with every link working, so that
/// routing a head copies ports out of a slice instead of walking the tables: per (TiN `x`,
/// destination pod `q`) when `q` is not `x`'s pod, and per (TiN `x`, destination TiN `dt` of
/// its pod) when it is. Each list is in the order the walk produces it, since the modes draw
/// candidates by index (the same lists give the same draws and the same routes).
struct Lists {
    ports: Vec<u16>,
    /// At `x · (pods + tins_per_pod) + q` for another pod `q`, at `… + pods + dt` inside `x`'s
    /// pod.
    spans: Vec<Spans>,
    /// `pods + tins_per_pod`: the stride of `spans`.
    stride: u32,
}

/// The lists of one (TiN, destination).
#[derive(Clone, Copy, Debug, Default)]
struct Spans {
    /// Another pod: the TiN's own global ports to it. Inside the pod: none.
    own: Span,
    /// Another pod: the local ports to the pod's holders of a link to it. Inside the pod: the
    /// local ports to the destination TiN.
    to_holders: Span,
    /// Another pod: the TiN's global ports to every other pod (a detour's first or second
    /// global hop). Inside the pod: none.
    other_globals: Span,
    /// Another pod: the local ports to the TiNs of the pod that hold no link to it and some
    /// global link elsewhere (detours). Inside the pod: the local ports to a third TiN the
    /// turn rule allows.
    detour_locals: Span,
}

impl Lists {
    fn new(df: &Dragonfly, holders: &[Vec<u32>], globals: &[Vec<(PortIdx, u32)>]) -> Lists {
        let (pods, t) = (df.pods, df.tins_per_pod);
        let stride = pods + t;
        let mut ports: Vec<u16> = Vec::new();
        let push = |ports: &mut Vec<u16>, list: &mut dyn Iterator<Item = PortIdx>| {
            let start = ports.len() as u32;
            ports.extend(list.map(|p| u16::try_from(p).expect("a TiN has under 65,536 ports")));
            Span {
                start,
                len: ports.len() as u32 - start,
            }
        };
        let locals = |x: u32, to: u32| (0..df.local_links).map(move |k| df.local_port(x, to, k));
        let mut spans = vec![Spans::default(); (df.tins() * stride) as usize];
        for x in 0..df.tins() {
            let (p, me) = (df.pod_of(x), df.tin_in_pod(x));
            let mine = &globals[x as usize];
            for q in (0..pods).filter(|&q| q != p) {
                let held = &holders[(p * pods + q) as usize];
                let s = &mut spans[(x * stride + q) as usize];
                s.own = push(
                    &mut ports,
                    &mut mine.iter().filter(|g| g.1 == q).map(|g| g.0),
                );
                // Used only when `x` holds no link to `q` itself, so `x` is not among them.
                let others = held.iter().filter(|&&h| h != me);
                s.to_holders = push(&mut ports, &mut others.flat_map(|&h| locals(x, h)));
                s.other_globals = push(
                    &mut ports,
                    &mut mine.iter().filter(|g| g.1 != q).map(|g| g.0),
                );
                let detours = (0..t).filter(|&o| {
                    o != me
                        && !held.contains(&o)
                        && globals[(p * t + o) as usize].iter().any(|g| g.1 != q)
                });
                s.detour_locals = push(&mut ports, &mut detours.flat_map(|o| locals(x, o)));
            }
            for dt in (0..t).filter(|&dt| dt != me) {
                let s = &mut spans[(x * stride + pods + dt) as usize];
                s.to_holders = push(&mut ports, &mut locals(x, dt));
                let turns = (0..t).filter(|&o| o != me && o != dt && !(o < me && o < dt));
                s.detour_locals = push(&mut ports, &mut turns.flat_map(|o| locals(x, o)));
            }
        }
        Lists {
            ports,
            spans,
            stride,
        }
    }

    fn ports(&self, s: Span) -> &[u16] {
        &self.ports[s.start as usize..(s.start + s.len) as usize]
    }
}

impl Router {
    pub fn new(df: &Dragonfly, topo: &Topology, rule: LevelRule) -> Router {
        let pods = df.pods as usize;
        let mut holders = vec![Vec::new(); pods * pods];
        for p in 0..df.pods {
            for q in (0..df.pods).filter(|&q| q != p) {
                let list = &mut holders[(p * df.pods + q) as usize];
                for k in 0..df.global_links {
                    list.push(df.global_port(p, q, k).0);
                }
                list.sort_unstable();
                list.dedup();
            }
        }
        let globals: Vec<Vec<(PortIdx, u32)>> = (0..df.tins())
            .map(|x| {
                (0..topo.ports(x) as PortIdx)
                    .filter_map(|p| match df.port_kind(x, p) {
                        DragonflyPort::Global { pod } => Some((p, pod)),
                        DragonflyPort::Local { .. } => None,
                    })
                    .collect()
            })
            .collect();
        let far: Vec<Vec<(NodeIdx, PortIdx, InKind)>> = (0..df.tins())
            .map(|x| {
                topo.links(x)
                    .iter()
                    .enumerate()
                    .map(|(p, l)| {
                        let kind = match df.port_kind(x, p as PortIdx) {
                            DragonflyPort::Local { .. } => InKind::Local,
                            DragonflyPort::Global { .. } => InKind::Global,
                        };
                        (l.peer, l.peer_port, kind)
                    })
                    .collect()
            })
            .collect();
        let removed = far.iter().map(|ports| vec![false; ports.len()]).collect();
        let lists = Lists::new(df, &holders, &globals);
        Router {
            df: df.clone(),
            holders,
            globals,
            far,
            rule,
            removed,
            escape: None,
            lists,
        }
    }

    /// The SDN's reaction to a failed link (§3.2: adaptive routing avoids it "until the SDN
    /// routing engine removes the entries of the link that lost connectivity"): both ends
    /// of the link from port `port` of `x` leave the tables, a pod that held a global link
    /// only through it no longer counts as holding one, and the escape tables are computed
    /// anew. Refused when the working links left would not connect every TiN to every other.
    pub fn remove_link(&mut self, x: NodeIdx, port: PortIdx) -> Result<(), String> {
        let Some(&(y, py, kind)) = self.far.get(x as usize).and_then(|f| f.get(port as usize))
        else {
            return Err(format!("TiN {x} has no network port {port}"));
        };
        if self.removed[x as usize][port as usize] {
            return Err(format!(
                "the link on port {port} of TiN {x} is removed already"
            ));
        }
        self.removed[x as usize][port as usize] = true;
        self.removed[y as usize][py as usize] = true;
        match Escape::new(&self.far, &self.removed) {
            Ok(escape) => self.escape = Some(escape),
            Err(cut) => {
                self.removed[x as usize][port as usize] = false;
                self.removed[y as usize][py as usize] = false;
                return Err(format!(
                    "removing the link on port {port} of TiN {x} (to TiN {y}) would leave no \
                     working path between TiN 0 and TiN {cut}: no table can route around it"
                ));
            }
        }
        if kind == InKind::Global {
            let (p, q) = (self.df.pod_of(x), self.df.pod_of(y));
            let t = self.df.tins_per_pod;
            self.globals[x as usize].retain(|&(g, _)| g != port);
            self.globals[y as usize].retain(|&(g, _)| g != py);
            for (a, b) in [(p, q), (q, p)] {
                let pods = self.df.pods;
                let held: Vec<u32> = (0..t)
                    .filter(|&i| {
                        self.globals[(a * t + i) as usize]
                            .iter()
                            .any(|&(_, pod)| pod == b)
                    })
                    .collect();
                self.holders[(a * pods + b) as usize] = held;
            }
        }
        Ok(())
    }

    /// Hops of the longest route a cell can take in any mode, what the header's hop count
    /// must allow: with every link working, [`ROUTE_HOPS`]. After a removal, a cell the
    /// earlier tables routed may sit where the new ones would never send one (a pod that has
    /// lost its link onward, say) and route on from there, so the bound runs over every state
    /// a cell on the routing VCs can be in, whatever tables put it there: the hops that led
    /// there (at most 0 from an endpoint; 1 from a local link at level 0; 2 from a global
    /// link at level 0; 3 from a local link at level 1; 4 from a global link at level 1, whose
    /// far end is in the destination's pod, since every table sends a second global hop
    /// there; a cell that came in over a local link at level 2 is at its destination) plus
    /// the longest route on from it. Not covered: a cell already on the escape VCs when the
    /// tables change again, which routes on from the new distances.
    pub fn longest_route(&self) -> u16 {
        const ENTRIES: [(InKind, u8, u16); 5] = [
            (InKind::Endpoint, 0, 0),
            (InKind::Local, 0, 1),
            (InKind::Global, 0, 2),
            (InKind::Local, 1, 3),
            (InKind::Global, 1, 4),
        ];
        if self.escape.is_none() {
            return ROUTE_HOPS;
        }
        let tins = self.df.tins();
        let states = tins as usize * 3 * usize::from(LEVELS + ESCAPE_VCS);
        let mut memo = vec![u16::MAX; states];
        let mut longest = 0;
        for non_minimal in [false, true] {
            for d in 0..tins {
                memo.fill(u16::MAX);
                for x in (0..tins).filter(|&x| x != d) {
                    for (from, level, before) in ENTRIES {
                        if from == InKind::Global
                            && level == 1
                            && self.df.pod_of(x) != self.df.pod_of(d)
                        {
                            continue;
                        }
                        let on = self.longest_from(x, from, level, d, non_minimal, &mut memo);
                        longest = longest.max(before + on);
                    }
                }
            }
        }
        longest
    }

    /// Hops of the longest route from a cell's state to `d` (memoised per state; the routes
    /// are acyclic, `crate::cdg`).
    fn longest_from(
        &self,
        x: NodeIdx,
        from: InKind,
        level: u8,
        d: NodeIdx,
        non_minimal: bool,
        memo: &mut [u16],
    ) -> u16 {
        let state = (x as usize * 3 + from as usize) * usize::from(LEVELS + ESCAPE_VCS)
            + usize::from(level);
        if memo[state] != u16::MAX {
            return memo[state];
        }
        let mut c = Candidates::default();
        self.candidates(x, from, level, d, non_minimal, &mut c);
        let mut longest = 0;
        for hop in c.minimal.iter().chain(&c.non_minimal) {
            if let Some(port) = hop.port {
                let (y, _, kind) = self.far_end(x, port);
                let rest = self.longest_from(y, kind, hop.level, d, non_minimal, memo);
                longest = longest.max(rest + 1);
            }
        }
        memo[state] = longest;
        longest
    }

    /// Whether the SDN has removed port `port` of `x` from the tables.
    pub fn is_removed(&self, x: NodeIdx, port: PortIdx) -> bool {
        self.removed[x as usize][port as usize]
    }

    /// Where port `port` of TiN `x` leads: the TiN, its port, and how the cell arrives there.
    pub fn far_end(&self, x: NodeIdx, port: PortIdx) -> (NodeIdx, PortIdx, InKind) {
        self.far[x as usize][port as usize]
    }

    /// Network ports of TiN `x`.
    pub fn ports(&self, x: NodeIdx) -> usize {
        self.far[x as usize].len()
    }

    pub fn dragonfly(&self) -> &Dragonfly {
        &self.df
    }

    fn holders(&self, p: u32, q: u32) -> &[u32] {
        &self.holders[(p * self.df.pods + q) as usize]
    }

    /// The level on the next port, for a cell that arrived over `from` at `level`.
    fn next_level(&self, from: InKind, level: u8, out_global: bool) -> u8 {
        let up = match self.rule {
            LevelRule::AfterEveryGlobal => from == InKind::Global,
            LevelRule::GlobalToLocalOnly => from == InKind::Global && !out_global,
        };
        level + u8::from(up)
    }

    /// Every candidate for a cell at TiN `x` that came in over `from` at `level`, bound for
    /// TiN `d`. Non-minimal candidates are listed only for a just-injected cell and when
    /// `non_minimal` is set; after a removal the minimal list may be empty while the
    /// non-minimal one is not (the detour is then the route). Both lists empty: the cell has
    /// no route (only a cell on VC 31 whose route a later removal cut).
    pub fn candidates(
        &self,
        x: NodeIdx,
        from: InKind,
        level: u8,
        d: NodeIdx,
        non_minimal: bool,
        out: &mut Candidates,
    ) {
        out.minimal.clear();
        out.non_minimal.clear();
        if x == d {
            out.minimal.push(Hop { port: None, level });
            return;
        }
        let Some(escape) = &self.escape else {
            self.listed_candidates(x, from, level, d, non_minimal, out);
            return;
        };
        if level < LEVELS {
            self.routing_candidates(x, from, level, d, non_minimal, out);
            if !out.minimal.is_empty() || !out.non_minimal.is_empty() {
                return;
            }
        }
        let (far, removed) = (&self.far[x as usize], &self.removed[x as usize]);
        escape.hops(x, level, d, far, removed, &mut out.minimal);
    }

    /// The routing VCs' candidates with every link working (`x` is not `d`), out of the
    /// precomputed lists: what [`Router::routing_candidates`] gives then, in its order (a
    /// test holds them equal on every state of two cliques).
    fn listed_candidates(
        &self,
        x: NodeIdx,
        from: InKind,
        level: u8,
        d: NodeIdx,
        non_minimal: bool,
        out: &mut Candidates,
    ) {
        let df = &self.df;
        let (p, q) = (df.pod_of(x), df.pod_of(d));
        let l = &self.lists;
        let hops = |ports: &[u16], level: u8, out: &mut Vec<Hop>| {
            out.extend(ports.iter().map(|&p| Hop {
                port: Some(PortIdx::from(p)),
                level,
            }));
        };
        let local_level = self.next_level(from, level, false);
        let detour = non_minimal && from == InKind::Endpoint;
        if p == q {
            let s = l.spans[(x * l.stride + df.pods + df.tin_in_pod(d)) as usize];
            hops(l.ports(s.to_holders), local_level, &mut out.minimal);
            if detour {
                hops(l.ports(s.detour_locals), local_level, &mut out.non_minimal);
            }
            return;
        }
        let s = l.spans[(x * l.stride + q) as usize];
        let global_level = self.next_level(from, level, true);
        if s.own.len > 0 {
            hops(l.ports(s.own), global_level, &mut out.minimal);
        } else if from == InKind::Local && level == 0 {
            hops(l.ports(s.other_globals), global_level, &mut out.minimal);
            return;
        } else {
            hops(l.ports(s.to_holders), local_level, &mut out.minimal);
        }
        if detour {
            hops(l.ports(s.other_globals), global_level, &mut out.non_minimal);
            hops(l.ports(s.detour_locals), local_level, &mut out.non_minimal);
        }
    }

    /// The routing VCs' candidates (`x` is not `d`), walked from the tables: after a removal
    /// (the lists above assume every link works).
    fn routing_candidates(
        &self,
        x: NodeIdx,
        from: InKind,
        level: u8,
        d: NodeIdx,
        non_minimal: bool,
        out: &mut Candidates,
    ) {
        let df = &self.df;
        let (p, q) = (df.pod_of(x), df.pod_of(d));
        let me = df.tin_in_pod(x);
        let local = |t: u32, out: &mut Vec<Hop>| {
            let level = self.next_level(from, level, false);
            for k in 0..df.local_links {
                let port = df.local_port(x, t, k);
                if !self.removed[x as usize][port as usize] {
                    out.push(Hop {
                        port: Some(port),
                        level,
                    });
                }
            }
        };
        let global_level = self.next_level(from, level, true);
        let detour = non_minimal && from == InKind::Endpoint;
        // Only after a removal may a detour lead where the tables have no onward route.
        let pruned = self.escape.is_some();
        if p == q {
            let dt = df.tin_in_pod(d);
            local(dt, &mut out.minimal);
            if detour {
                for t in 0..df.tins_per_pod {
                    if t != me
                        && t != dt
                        && !(t < me && t < dt)
                        && (!pruned || self.linked(p * df.tins_per_pod + t, dt))
                    {
                        local(t, &mut out.non_minimal);
                    }
                }
            }
            return;
        }
        // A pod a detour may go through towards Q.
        let via = |pod: u32| pod != q && (!pruned || !self.holders(pod, q).is_empty());
        let own = self.globals[x as usize]
            .iter()
            .filter(|&&(_, pod)| pod == q)
            .map(|&(port, _)| Hop {
                port: Some(port),
                level: global_level,
            });
        // x's own global links to Q, if it has any, are its minimal routes.
        out.minimal.extend(own);
        let holders = self.holders(p, q);
        if out.minimal.is_empty() {
            if from == InKind::Local && level == 0 {
                // A detour's second TiN: it holds no link to Q, so any of its global links.
                out.minimal.extend(
                    self.globals[x as usize]
                        .iter()
                        .filter(|&&(_, pod)| via(pod))
                        .map(|&(port, _)| Hop {
                            port: Some(port),
                            level: global_level,
                        }),
                );
                return;
            }
            for &h in holders {
                local(h, &mut out.minimal);
            }
        }
        if detour {
            out.non_minimal.extend(
                self.globals[x as usize]
                    .iter()
                    .filter(|&&(_, pod)| via(pod))
                    .map(|&(port, _)| Hop {
                        port: Some(port),
                        level: global_level,
                    }),
            );
            // Only to a TiN with a global link onward: in a clique of two pods, or one with
            // unwired global ports, a TiN may hold none, and a detour there would have no
            // route (issue 37's fuzzing found the panic).
            for t in (0..df.tins_per_pod).filter(|&t| t != me && !holders.contains(&t)) {
                if self.globals[(p * df.tins_per_pod + t) as usize]
                    .iter()
                    .any(|&(_, pod)| via(pod))
                {
                    local(t, &mut out.non_minimal);
                }
            }
        }
    }

    /// Whether TiN `x` keeps a local link to TiN `t` (in-pod index) of its pod.
    fn linked(&self, x: NodeIdx, t: u32) -> bool {
        (0..self.df.local_links)
            .any(|k| !self.removed[x as usize][self.df.local_port(x, t, k) as usize])
    }
}

/// The flow-invariant hash that deterministic modes choose by (§3.2: "a hash of the source
/// and destination addresses"), mixed with the TiN so that successive hops choose
/// independently. SplitMix64's finaliser: stable across platforms.
pub fn route_hash(src: u32, dst: u32, tin: NodeIdx) -> u64 {
    let mut z = (u64::from(src) << 40) ^ (u64::from(dst) << 20) ^ u64::from(tin);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{Dur, Rate};

    fn full() -> (Dragonfly, Topology) {
        let df = Dragonfly::aquila(
            Rate::gbps(27),
            Rate::gbps(25),
            Dur::from_ns(20),
            Dur::from_ns(550),
        );
        let t = df.build().unwrap();
        (df, t)
    }

    #[test]
    fn the_full_clique_has_eight_minimal_routes_between_pods() {
        let (df, topo) = full();
        let r = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        let mut c = Candidates::default();
        let mut checked = 0;
        for s in [0u32, 5, 100, 575] {
            for d in 0..df.tins() {
                if df.pod_of(s) == df.pod_of(d) {
                    continue;
                }
                // Count whole routes: first-hop choices times the choices after each.
                let routes = count_minimal(&r, s, InKind::Endpoint, 0, d, &mut c);
                let (p, q) = (df.pod_of(s), df.pod_of(d));
                let holder = r.holders(p, q).contains(&df.tin_in_pod(s));
                if !holder && !r.holders(q, p).contains(&df.tin_in_pod(d)) {
                    assert_eq!(routes, 8, "{s} -> {d}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000);
    }

    fn count_minimal(
        r: &Router,
        x: u32,
        from: InKind,
        level: u8,
        d: u32,
        c: &mut Candidates,
    ) -> u64 {
        r.candidates(x, from, level, d, false, c);
        let hops = c.minimal.clone();
        hops.iter()
            .map(|h| match h.port {
                None => 1,
                Some(p) => {
                    let (y, _, kind) = r.far_end(x, p);
                    count_minimal(r, y, kind, h.level, d, c)
                }
            })
            .sum()
    }

    #[test]
    fn non_minimal_candidates_are_offered_only_at_the_source() {
        let (df, topo) = full();
        let r = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        let mut c = Candidates::default();
        r.candidates(0, InKind::Endpoint, 0, 575, true, &mut c);
        assert!(
            (24..=28).contains(&c.non_minimal.len()),
            "{}",
            c.non_minimal.len()
        );
        r.candidates(0, InKind::Global, 1, 575, true, &mut c);
        assert!(c.non_minimal.is_empty());
        r.candidates(0, InKind::Endpoint, 0, 575, false, &mut c);
        assert!(c.non_minimal.is_empty());
    }

    /// The precomputed lists give what the walk of the tables gives, in its order, for every
    /// state a cell can route from: every (TiN, arrival, level, destination, detours allowed)
    /// of the 9 x 4 clique under both level rules, and of every tenth destination of the full
    /// clique.
    #[test]
    fn the_lists_give_the_walks_candidates_in_its_order() {
        let (full_df, full_topo) = full();
        let mut small = full_df.clone();
        (
            small.pods,
            small.tins_per_pod,
            small.local_links,
            small.global_links,
        ) = (9, 4, 2, 1);
        (small.local_ports, small.global_ports) = (6, 2);
        let small_topo = small.build().unwrap();
        let cases = [
            (&small, &small_topo, LevelRule::AfterEveryGlobal, 1),
            (&small, &small_topo, LevelRule::GlobalToLocalOnly, 1),
            (&full_df, &full_topo, LevelRule::AfterEveryGlobal, 10),
        ];
        let (mut a, mut b) = (Candidates::default(), Candidates::default());
        for (df, topo, rule, step) in cases {
            let r = Router::new(df, topo, rule);
            let mut compared = 0;
            for x in 0..df.tins() {
                for d in (0..df.tins()).step_by(step).filter(|&d| d != x) {
                    for from in [InKind::Endpoint, InKind::Local, InKind::Global] {
                        for level in 0..LEVELS {
                            for nm in [false, true] {
                                for c in [&mut a, &mut b] {
                                    c.minimal.clear();
                                    c.non_minimal.clear();
                                }
                                r.listed_candidates(x, from, level, d, nm, &mut a);
                                r.routing_candidates(x, from, level, d, nm, &mut b);
                                assert_eq!(a, b, "{x} -> {d} from {from:?} L{level} {nm}");
                                compared += 1;
                            }
                        }
                    }
                }
            }
            assert!(compared > 10_000, "{compared}");
        }
    }

    #[test]
    fn modes_round_trip_their_names() {
        for m in Mode::ALL {
            assert_eq!(Mode::from_name(m.name()), Some(m));
        }
        assert_eq!(Mode::from_name("ugal"), None);
        assert_eq!(vc(9, 2), 29);
    }
}
