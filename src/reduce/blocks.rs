//! A refinable partition: blocks as contiguous ranges of one array of nodes, split by moving
//! a group of a block's members to its end (shared by the signature and the constellation
//! algorithms of branching bisimulation).

#![forbid(unsafe_code)]

/// Blocks as ranges of one array (a refinable partition).
pub(super) struct Blocks {
    /// The nodes, each block's contiguous.
    pub(super) elems: Vec<u32>,
    /// The index of each node in `elems`.
    pub(super) pos: Vec<u32>,
    /// The range `first[b]..end[b]` of block `b` in `elems`.
    pub(super) first: Vec<u32>,
    pub(super) end: Vec<u32>,
}

impl Blocks {
    /// The partition in which node `x` is in block `block[x]` (`count` blocks, none empty),
    /// each block's nodes in increasing order.
    pub(super) fn of(block: &[u32], count: usize) -> Blocks {
        let mut first = vec![0u32; count + 1];
        for &b in block {
            first[b as usize + 1] += 1;
        }
        for b in 0..count {
            first[b + 1] += first[b];
        }
        let end = first[1..].to_vec();
        first.truncate(count);
        let mut fill = first.clone();
        let mut elems = vec![0u32; block.len()];
        let mut pos = vec![0u32; block.len()];
        for (x, &b) in block.iter().enumerate() {
            let at = &mut fill[b as usize];
            elems[*at as usize] = x as u32;
            pos[x] = *at;
            *at += 1;
        }
        Blocks {
            elems,
            pos,
            first,
            end,
        }
    }

    pub(super) fn size(&self, b: u32) -> u32 {
        self.end[b as usize] - self.first[b as usize]
    }

    pub(super) fn members(&self, b: u32) -> &[u32] {
        &self.elems[self.first[b as usize] as usize..self.end[b as usize] as usize]
    }

    /// Moves `group` (members of block `b`) out of `b` into a new block `fresh`.
    pub(super) fn carve(&mut self, b: u32, group: &[u32], fresh: u32) {
        let old_end = self.end[b as usize];
        for &x in group {
            let last = self.end[b as usize] - 1;
            let at = self.pos[x as usize];
            let other = self.elems[last as usize];
            self.elems.swap(at as usize, last as usize);
            self.pos[other as usize] = at;
            self.pos[x as usize] = last;
            self.end[b as usize] = last;
        }
        debug_assert_eq!(fresh as usize, self.first.len());
        self.first.push(self.end[b as usize]);
        self.end.push(old_end);
    }
}
