//! What a disaggregated application's traffic is made of: roles, role-pair traffic classes
//! and skew, as plain public data a scenario can override, validate and print.

use super::DisaggError;
use crate::sizes::{Bytes, SizeDist};
use serde::{Deserialize, Serialize};
use std::fmt::{self, Write as _};

/// The resource a rack node provides in a disaggregated rack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Cpu,
    Memory,
    Storage,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Cpu, Role::Memory, Role::Storage];

    pub(super) fn idx(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Cpu => "CPU",
            Role::Memory => "memory",
            Role::Storage => "storage",
        })
    }
}

/// One value per role.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerRole<T> {
    pub cpu: T,
    pub memory: T,
    pub storage: T,
}

impl<T: Copy> PerRole<T> {
    pub fn get(&self, role: Role) -> T {
        match role {
            Role::Cpu => self.cpu,
            Role::Memory => self.memory,
            Role::Storage => self.storage,
        }
    }

    pub(super) fn from_fn(f: impl Fn(Role) -> T) -> PerRole<T> {
        PerRole {
            cpu: f(Role::Cpu),
            memory: f(Role::Memory),
            storage: f(Role::Storage),
        }
    }
}

/// Flows from nodes of role `from` to nodes of role `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrafficClass {
    pub from: Role,
    pub to: Role,
    /// Relative share of flows (weights are normalised over the profile's classes).
    pub weight: f64,
    pub sizes: SizeDist,
    /// What these flows stand for, and why these sizes.
    pub what: String,
}

/// The parameters of one application's traffic in a disaggregated rack.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppProfile {
    pub name: String,
    /// Which of the paper's four kinds of application it stands for.
    pub category: String,
    /// Share of the rack's nodes in each role (normalised; each role with a positive share gets
    /// at least one node).
    pub roles: PerRole<f64>,
    pub classes: Vec<TrafficClass>,
    /// Fraction of each role's nodes that are hot (1/3: "a third of the nodes").
    pub hot_nodes: f64,
    /// Probability that a flow is drawn between hot nodes only. The realised fraction of flows
    /// among hot nodes is higher, since uniform draws also land on hot nodes.
    pub hot_share: f64,
    /// Why the numbers are what they are.
    pub rationale: String,
}

impl AppProfile {
    /// Checks what does not depend on the rack size.
    pub fn validate(&self) -> Result<(), DisaggError> {
        for role in Role::ALL {
            let value = self.roles.get(role);
            if !(value >= 0.0 && value.is_finite()) {
                return Err(DisaggError::RoleShare { role, value });
            }
        }
        if Role::ALL.iter().all(|&r| self.roles.get(r) == 0.0) {
            return Err(DisaggError::NoRoles);
        }
        if !(self.hot_nodes > 0.0 && self.hot_nodes <= 1.0) {
            return Err(DisaggError::HotNodes(self.hot_nodes));
        }
        if !(0.0..=1.0).contains(&self.hot_share) {
            return Err(DisaggError::HotShare(self.hot_share));
        }
        for (i, c) in self.classes.iter().enumerate() {
            if !(c.weight >= 0.0 && c.weight.is_finite()) {
                return Err(DisaggError::Weight {
                    class: i,
                    weight: c.weight,
                });
            }
            if c.weight == 0.0 {
                continue;
            }
            c.sizes
                .validate()
                .map_err(|source| DisaggError::Sizes { class: i, source })?;
            for role in [c.from, c.to] {
                if self.roles.get(role) == 0.0 {
                    return Err(DisaggError::RoleWithoutNodes { class: i, role });
                }
            }
        }
        if self.total_weight() <= 0.0 {
            return Err(DisaggError::NoTraffic);
        }
        Ok(())
    }

    pub(super) fn total_weight(&self) -> f64 {
        self.classes.iter().map(|c| c.weight).sum()
    }

    /// The mean flow size in bytes: the classes' drawn means weighted by their shares.
    pub fn expected_mean(&self) -> f64 {
        let total = self.total_weight();
        self.classes
            .iter()
            .filter(|c| c.weight > 0.0)
            .map(|c| c.weight / total * c.sizes.expected_mean())
            .sum()
    }

    /// A multi-line account of the profile and its assumptions, for runs to print.
    pub fn describe(&self) -> String {
        let total = self.total_weight();
        let r = &self.roles;
        let mut s = format!(
            "{} ({}): {}\n  nodes: {:.0}% CPU, {:.0}% memory, {:.0}% storage (our assumption)\n  \
             skew: {:.0}% of flows drawn among the hot {:.0}% of each role's nodes, the rest \
             uniform; the paper reports more than 84% of flows among a third of the nodes\n  \
             mean flow {}\n",
            self.name,
            self.category,
            self.rationale,
            r.cpu * 100.0,
            r.memory * 100.0,
            r.storage * 100.0,
            self.hot_share * 100.0,
            self.hot_nodes * 100.0,
            Bytes(self.expected_mean()),
        );
        for c in &self.classes {
            let _ = writeln!(
                s,
                "  {:>4.1}% {}→{}: {}; sizes {}",
                c.weight / total * 100.0,
                c.from,
                c.to,
                c.what,
                c.sizes
            );
        }
        s.push_str(
            "  all shares, sizes and skew are assumptions: the traces of Gao et al. (OSDI 2016) \
             that the paper used are not available",
        );
        s
    }
}
