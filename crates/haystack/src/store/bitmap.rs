//! [`Bitmap`]: a growable bit set over dense entity numbers, one bit per entity in
//! `u64` words; [`PostingList`]: a sorted list of entity numbers for sparse sets.

/// A set of entity numbers as bits in `u64` words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bitmap {
    words: Vec<u64>,
}

impl Bitmap {
    /// An empty set.
    pub fn new() -> Self {
        Bitmap::default()
    }

    /// Adds `n`, growing the words as needed.
    pub fn insert(&mut self, n: u32) {
        let (word, bit) = split(n);
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        if let Some(w) = self.words.get_mut(word) {
            *w |= bit;
        }
    }

    /// Removes `n`.
    pub fn remove(&mut self, n: u32) {
        let (word, bit) = split(n);
        if let Some(w) = self.words.get_mut(word) {
            *w &= !bit;
        }
    }

    /// Whether `n` is in the set.
    pub fn contains(&self, n: u32) -> bool {
        let (word, bit) = split(n);
        self.words.get(word).is_some_and(|w| w & bit != 0)
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Keeps only the members also in `other`.
    pub fn intersect_with(&mut self, other: &Bitmap) {
        self.words.truncate(other.words.len());
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// Adds the members of `other`.
    pub fn union_with(&mut self, other: &Bitmap) {
        if other.words.len() > self.words.len() {
            self.words.resize(other.words.len(), 0);
        }
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// Removes the members of `other`.
    pub fn subtract(&mut self, other: &Bitmap) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let base = (i as u32) * 64;
            BitsOf(word).map(move |bit| base + bit)
        })
    }
}

fn split(n: u32) -> (usize, u64) {
    ((n / 64) as usize, 1u64 << (n % 64))
}

/// Iterates the set bit positions of one word, lowest first.
struct BitsOf(u64);

impl Iterator for BitsOf {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.0 == 0 {
            return None;
        }
        let bit = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(bit)
    }
}

impl FromIterator<u32> for Bitmap {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut bitmap = Bitmap::new();
        for n in iter {
            bitmap.insert(n);
        }
        bitmap
    }
}

/// A sorted, duplicate-free list of entity numbers: the compact form for the small
/// sets of a value index (e.g. the points of one equip).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PostingList {
    items: Vec<u32>,
}

impl PostingList {
    /// Adds `n` (no effect if present).
    pub fn insert(&mut self, n: u32) {
        if let Err(at) = self.items.binary_search(&n) {
            self.items.insert(at, n);
        }
    }

    /// Removes `n` (no effect if absent).
    pub fn remove(&mut self, n: u32) {
        if let Ok(at) = self.items.binary_search(&n) {
            self.items.remove(at);
        }
    }

    /// Whether `n` is present.
    pub fn contains(&self, n: u32) -> bool {
        self.items.binary_search(&n).is_ok()
    }

    /// The members in increasing order.
    pub fn as_slice(&self) -> &[u32] {
        &self.items
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn bitmap_matches_a_sorted_set(a in proptest::collection::btree_set(0u32..500, 0..60),
                                       b in proptest::collection::btree_set(0u32..500, 0..60)) {
            let bitmap_a: Bitmap = a.iter().copied().collect();
            let bitmap_b: Bitmap = b.iter().copied().collect();
            prop_assert_eq!(bitmap_a.iter().collect::<Vec<_>>(), a.iter().copied().collect::<Vec<_>>());
            prop_assert_eq!(bitmap_a.len(), a.len());
            let mut and = bitmap_a.clone();
            and.intersect_with(&bitmap_b);
            prop_assert_eq!(and.iter().collect::<Vec<_>>(), a.intersection(&b).copied().collect::<Vec<_>>());
            let mut or = bitmap_a.clone();
            or.union_with(&bitmap_b);
            prop_assert_eq!(or.iter().collect::<Vec<_>>(), a.union(&b).copied().collect::<Vec<_>>());
            let mut minus = bitmap_a.clone();
            minus.subtract(&bitmap_b);
            prop_assert_eq!(minus.iter().collect::<Vec<_>>(), a.difference(&b).copied().collect::<Vec<_>>());
            let mut list = PostingList::default();
            for &n in a.iter().rev() { list.insert(n); list.insert(n); }
            let expected: Vec<u32> = a.iter().copied().collect();
            prop_assert_eq!(list.as_slice(), expected.as_slice());
        }
    }

    #[test]
    fn insert_remove_contains() {
        let mut b = Bitmap::new();
        b.insert(3);
        b.insert(130);
        assert!(b.contains(130) && b.contains(3) && !b.contains(4) && !b.contains(100_000));
        b.remove(3);
        b.remove(100_000);
        assert_eq!(b.iter().collect::<Vec<_>>(), [130]);
        assert!(!b.is_empty());
        let mut p = PostingList::default();
        p.insert(5);
        p.insert(1);
        p.remove(5);
        assert_eq!(p.as_slice(), [1]);
        assert!(p.contains(1) && !p.contains(5));
    }
}
