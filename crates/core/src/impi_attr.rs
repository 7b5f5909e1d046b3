//! The client and host attributes of IMPI 2.5 (`IMPI_CLIENT_SIZE`, `IMPI_CLIENT_COLOR`,
//! `IMPI_HOST_SIZE`, `IMPI_HOST_COLOR`): where each world rank of an IMPI job lives,
//! and the values a communicator's attributes take from it (docs/impi.md, item 50).

use crate::attr::Predefined;

/// Each world rank's IMPI client and host (job-wide numbers, client 0's first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImpiPlaces {
    pub client: Vec<u32>,
    pub host: Vec<u32>,
}

impl ImpiPlaces {
    /// The value of attribute `p` for world rank `me` in a communicator whose (local)
    /// group has world ranks `members`; `None` for an attribute that is not IMPI's.
    /// The colors number the clients (hosts) present in the group in the order of
    /// their host ranks in `MPI_COMM_WORLD`, which is the order of their numbers.
    pub fn value(&self, p: Predefined, members: &[u32], me: u32) -> Option<i32> {
        let of = match p {
            Predefined::ImpiClientSize | Predefined::ImpiClientColor => &self.client,
            Predefined::ImpiHostSize | Predefined::ImpiHostColor => &self.host,
            _ => return None,
        };
        let mut present: Vec<u32> = members
            .iter()
            .filter_map(|&w| of.get(w as usize).copied())
            .collect();
        present.sort_unstable();
        present.dedup();
        match p {
            Predefined::ImpiClientSize | Predefined::ImpiHostSize => Some(present.len() as i32),
            _ => {
                let mine = of.get(me as usize)?;
                present.binary_search(mine).ok().map(|i| i as i32)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_colors_follow_the_clients_in_the_group() {
        // Three clients: ranks 0-1, 2-4, 5; every rank its own host.
        let pl = ImpiPlaces {
            client: vec![0, 0, 1, 1, 1, 2],
            host: vec![0, 1, 2, 3, 4, 5],
        };
        let world: Vec<u32> = (0..6).collect();
        assert_eq!(pl.value(Predefined::ImpiClientSize, &world, 3), Some(3));
        assert_eq!(pl.value(Predefined::ImpiClientColor, &world, 3), Some(1));
        assert_eq!(pl.value(Predefined::ImpiClientColor, &world, 5), Some(2));
        assert_eq!(pl.value(Predefined::ImpiHostSize, &world, 5), Some(6));
        assert_eq!(pl.value(Predefined::ImpiHostColor, &world, 4), Some(4));
        // A group of ranks 5, 1 (reordered): two clients, colors by client order.
        let g = [5, 1];
        assert_eq!(pl.value(Predefined::ImpiClientSize, &g, 5), Some(2));
        assert_eq!(pl.value(Predefined::ImpiClientColor, &g, 5), Some(1));
        assert_eq!(pl.value(Predefined::ImpiClientColor, &g, 1), Some(0));
        assert_eq!(pl.value(Predefined::ImpiHostColor, &g, 5), Some(1));
        assert_eq!(pl.value(Predefined::TagUb, &g, 5), None);
    }
}
