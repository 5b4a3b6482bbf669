//! The query planner's candidate sets: [`EntitySet`] combines index lookups (bitmaps
//! borrowed from the has-tag index, posting lists from the value index) so that an
//! `and` touching a small posting list costs O(result), not O(entities).

use super::bitmap::Bitmap;

/// A set of entity numbers produced by the indexes, borrowed where possible.
#[derive(Debug, Clone)]
pub(crate) enum EntitySet<'a> {
    /// A sorted slice borrowed from a value index.
    Slice(&'a [u32]),
    /// A sorted list built during planning.
    List(Vec<u32>),
    /// A bitmap borrowed from the has-tag index.
    Bits(&'a Bitmap),
    /// Every live entity that is NOT in the borrowed bitmap (`not tag`).
    NotBits {
        /// All live entities.
        live: &'a Bitmap,
        /// The excluded ones.
        excluded: &'a Bitmap,
    },
    /// A bitmap built during planning.
    OwnedBits(Bitmap),
}

impl<'a> EntitySet<'a> {
    /// The empty set.
    pub(crate) fn empty() -> Self {
        EntitySet::List(Vec::new())
    }

    /// Size when cheap to know (sparse forms), for ordering intersections.
    pub(crate) fn sparse_len(&self) -> Option<usize> {
        match self {
            EntitySet::Slice(s) => Some(s.len()),
            EntitySet::List(v) => Some(v.len()),
            _ => None,
        }
    }

    /// Whether `n` is in the set.
    pub(crate) fn contains(&self, n: u32) -> bool {
        match self {
            EntitySet::Slice(s) => s.binary_search(&n).is_ok(),
            EntitySet::List(v) => v.binary_search(&n).is_ok(),
            EntitySet::Bits(b) => b.contains(n),
            EntitySet::NotBits { live, excluded } => live.contains(n) && !excluded.contains(n),
            EntitySet::OwnedBits(b) => b.contains(n),
        }
    }

    fn into_bitmap(self) -> Bitmap {
        match self {
            EntitySet::Slice(s) => s.iter().copied().collect(),
            EntitySet::List(v) => v.into_iter().collect(),
            EntitySet::Bits(b) => b.clone(),
            EntitySet::NotBits { live, excluded } => {
                let mut bits = live.clone();
                bits.subtract(excluded);
                bits
            }
            EntitySet::OwnedBits(b) => b,
        }
    }

    /// The intersection; stays sparse (and O(sparse size)) when either side is sparse.
    pub(crate) fn intersect(self, other: EntitySet<'a>) -> EntitySet<'a> {
        match (self.sparse_len(), other.sparse_len()) {
            (Some(a), Some(b)) if b < a => other.filter_sparse(&self),
            (Some(_), _) => self.filter_sparse(&other),
            (None, Some(_)) => other.filter_sparse(&self),
            (None, None) => {
                let mut bits = self.into_bitmap();
                match other {
                    EntitySet::NotBits { excluded, .. } => bits.subtract(excluded),
                    EntitySet::Bits(b) => bits.intersect_with(b),
                    other => bits.intersect_with(&other.into_bitmap()),
                }
                EntitySet::OwnedBits(bits)
            }
        }
    }

    /// Keeps the members of a sparse `self` that `other` contains.
    fn filter_sparse(self, other: &EntitySet<'_>) -> EntitySet<'a> {
        let kept = match self {
            EntitySet::Slice(s) => s.iter().copied().filter(|&n| other.contains(n)).collect(),
            EntitySet::List(mut v) => {
                v.retain(|&n| other.contains(n));
                v
            }
            dense => dense.iter().filter(|&n| other.contains(n)).collect(),
        };
        EntitySet::List(kept)
    }

    /// The union.
    pub(crate) fn union(self, other: EntitySet<'a>) -> EntitySet<'a> {
        if self.sparse_len().is_some() && other.sparse_len().is_some() {
            let (a, b) = (self.into_sorted_vec(), other.into_sorted_vec());
            let mut merged = Vec::with_capacity(a.len() + b.len());
            let (mut i, mut j) = (0, 0);
            while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
                if x <= y {
                    merged.push(x);
                    i += 1;
                    if x == y {
                        j += 1;
                    }
                } else {
                    merged.push(y);
                    j += 1;
                }
            }
            merged.extend_from_slice(a.get(i..).unwrap_or(&[]));
            merged.extend_from_slice(b.get(j..).unwrap_or(&[]));
            return EntitySet::List(merged);
        }
        let mut bits = self.into_bitmap();
        bits.union_with(&other.into_bitmap());
        EntitySet::OwnedBits(bits)
    }

    fn into_sorted_vec(self) -> Vec<u32> {
        match self {
            EntitySet::Slice(s) => s.to_vec(),
            EntitySet::List(v) => v,
            other => other.iter().collect(),
        }
    }

    /// The members in increasing order.
    pub(crate) fn iter(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match self {
            EntitySet::Slice(s) => Box::new(s.iter().copied()),
            EntitySet::List(v) => Box::new(v.iter().copied()),
            EntitySet::Bits(b) => Box::new(b.iter()),
            EntitySet::NotBits { live, excluded } => {
                Box::new(live.iter().filter(move |&n| !excluded.contains(n)))
            }
            EntitySet::OwnedBits(b) => Box::new(b.iter()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(items: &[u32]) -> Bitmap {
        items.iter().copied().collect()
    }

    #[test]
    fn set_algebra_matches_between_forms() {
        let live = bits(&[1, 2, 3, 4, 5, 6, 70]);
        let evens = bits(&[2, 4, 6, 70]);
        let sparse = [3u32, 4, 70];
        let s = EntitySet::Slice(&sparse);
        let not_even = EntitySet::NotBits {
            live: &live,
            excluded: &evens,
        };
        assert_eq!(
            s.clone()
                .intersect(not_even.clone())
                .iter()
                .collect::<Vec<_>>(),
            [3]
        );
        assert_eq!(
            not_even
                .clone()
                .intersect(EntitySet::Bits(&evens))
                .iter()
                .count(),
            0
        );
        assert_eq!(
            s.clone()
                .union(EntitySet::List(vec![1, 4, 80]))
                .iter()
                .collect::<Vec<_>>(),
            [1, 3, 4, 70, 80]
        );
        assert_eq!(
            not_even.union(s).iter().collect::<Vec<_>>(),
            [1, 3, 4, 5, 70]
        );
        assert!(EntitySet::empty().iter().next().is_none());
    }
}
