//! The memory that request bodies being received may take, in all and per user.
//!
//! Issue 30: each body was held in memory up to `max_body_bytes` (16 MiB) with no overall
//! cap, so one logged-in user with 60 unfinished uploads took the server to 935 MiB. Now a
//! body reserves its bytes as they arrive (its declared Content-Length at once), from a
//! budget for the whole server and a smaller one per user; a body that does not fit is
//! refused (503 when the server's budget is spent, 429 when the user's is) and the
//! reservation is returned when the request is done.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Why a body could not reserve more bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BudgetExceeded {
    /// The bodies in progress on the whole server take the server's budget.
    #[error(
        "the server is receiving too many request bodies at once ({0} bytes in all): retry shortly"
    )]
    Server(usize),
    /// This user's bodies in progress take the user's share.
    #[error("your request bodies in progress exceed {0} bytes: wait for them to finish")]
    User(usize),
}

#[derive(Debug, Default)]
struct Used {
    total: usize,
    by_user: HashMap<String, usize>,
}

/// The budgets and what is reserved now.
#[derive(Debug)]
pub(crate) struct BodyBudget {
    total: usize,
    per_user: usize,
    used: Mutex<Used>,
}

impl BodyBudget {
    /// Budgets of `total` bytes for the server and `per_user` for one user.
    pub(crate) fn new(total: usize, per_user: usize) -> Arc<Self> {
        Arc::new(Self {
            total,
            per_user: per_user.min(total),
            used: Mutex::new(Used::default()),
        })
    }

    /// An empty reservation of `user`'s.
    pub(crate) fn reservation(self: &Arc<Self>, user: &str) -> Reservation {
        Reservation {
            budget: Arc::clone(self),
            user: user.to_owned(),
            bytes: 0,
        }
    }

    fn take(&self, user: &str, bytes: usize) -> Result<(), BudgetExceeded> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = used.by_user.get(user).copied().unwrap_or(0);
        if mine.saturating_add(bytes) > self.per_user {
            return Err(BudgetExceeded::User(self.per_user));
        }
        if used.total.saturating_add(bytes) > self.total {
            return Err(BudgetExceeded::Server(self.total));
        }
        used.total += bytes;
        *used.by_user.entry(user.to_owned()).or_default() += bytes;
        Ok(())
    }

    fn give_back(&self, user: &str, bytes: usize) {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.total = used.total.saturating_sub(bytes);
        if let Some(mine) = used.by_user.get_mut(user) {
            *mine = mine.saturating_sub(bytes);
            if *mine == 0 {
                used.by_user.remove(user);
            }
        }
    }

    /// Bytes reserved now, in all.
    #[cfg(test)]
    fn in_use(&self) -> usize {
        self.used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }
}

/// Bytes one request's body holds; given back when dropped.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<BodyBudget>,
    user: String,
    bytes: usize,
}

impl Reservation {
    /// Reserves `bytes` more.
    pub(crate) fn grow(&mut self, bytes: usize) -> Result<(), BudgetExceeded> {
        self.budget.take(&self.user, bytes)?;
        self.bytes += bytes;
        Ok(())
    }

    /// Makes sure at least `bytes` are reserved in all (a declared Content-Length).
    pub(crate) fn at_least(&mut self, bytes: usize) -> Result<(), BudgetExceeded> {
        match bytes.checked_sub(self.bytes) {
            Some(more) if more > 0 => self.grow(more),
            _ => Ok(()),
        }
    }

    /// Bytes reserved so far.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.give_back(&self.user, self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_user_cannot_take_more_than_its_share() {
        let budget = BodyBudget::new(100, 40);
        let mut first = budget.reservation("ann");
        assert_eq!(first.grow(30), Ok(()));
        let mut second = budget.reservation("ann");
        assert_eq!(second.grow(20), Err(BudgetExceeded::User(40)));
        // Another user still has room, and a finished body gives its bytes back.
        let mut other = budget.reservation("bob");
        assert_eq!(other.grow(40), Ok(()));
        drop(first);
        assert_eq!(second.grow(20), Ok(()));
        assert_eq!(budget.in_use(), 60);
    }

    #[test]
    fn the_server_budget_bounds_everyone() {
        let budget = BodyBudget::new(100, 60);
        let mut kept = Vec::new();
        for user in ["a", "b"] {
            let mut r = budget.reservation(user);
            assert_eq!(r.grow(50), Ok(()));
            kept.push(r);
        }
        let mut third = budget.reservation("c");
        assert_eq!(third.grow(1), Err(BudgetExceeded::Server(100)));
        kept.clear();
        assert_eq!(budget.in_use(), 0);
        assert_eq!(third.grow(1), Ok(()));
    }

    #[test]
    fn a_declared_length_is_reserved_once() {
        let budget = BodyBudget::new(100, 100);
        let mut r = budget.reservation("ann");
        assert_eq!(r.at_least(70), Ok(()));
        assert_eq!(r.at_least(50), Ok(()));
        assert_eq!(r.bytes(), 70);
        assert_eq!(r.at_least(90), Ok(()));
        assert_eq!(budget.in_use(), 90);
    }
}
