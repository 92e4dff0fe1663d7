//! The factories' random streams are keyed by identity.

use super::*;
use crate::engine::RngStreams;
use rand::Rng;

/// `factory_analysis.ron`'s three factories, in their order and reversed: each factory's
/// lifetime stream draws the same numbers wherever it stands in the list.
#[test]
fn a_factorys_stream_does_not_depend_on_its_place_in_the_list() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/factory_analysis.ron");
    let s = crate::scenario::load_file(&path).unwrap().scenario;
    let mut reversed = s.clone();
    reversed.factory.reverse();
    let rngs = RngStreams::new(31);
    let (mut a, mut b) = (Factories::new(&s, &["dirac"], &rngs), Factories::new(&reversed, &["dirac"], &rngs));
    assert_eq!((a.list.len(), b.list.len()), (3, 3));
    let ids: Vec<String> = a.list.iter().map(|f| f.cfg.identity(&s.sites)).collect();
    assert_eq!(ids.iter().collect::<std::collections::BTreeSet<_>>().len(), 3, "{ids:?}");
    for (i, f) in a.list.iter_mut().enumerate() {
        let g = &mut b.list[2 - i];
        assert_eq!(g.cfg, f.cfg);
        assert_eq!(f.rng.next_u64(), g.rng.next_u64(), "factory {}", ids[i]);
    }
}
