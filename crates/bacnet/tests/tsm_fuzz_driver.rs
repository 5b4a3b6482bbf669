//! The `tsm` fuzz target's driver run under proptest: random instruction streams (datagrams,
//! requests, answers, cancellations, time steps, cross-wired traffic) must never panic and
//! must keep every table within its limit.

use proptest::prelude::*;

include!("../fuzz/drivers/tsm.rs");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_instruction_streams_keep_tables_bounded(data in proptest::collection::vec(any::<u8>(), 0..4000)) {
        drive(&data);
    }

    /// Streams made mostly of requests, answers, time steps and cross-wired traffic.
    #[test]
    fn traffic_heavy_streams_keep_tables_bounded(
        ops in proptest::collection::vec((prop_oneof![Just(0u8), Just(3), Just(4), Just(6), Just(7), Just(5)], any::<[u8; 3]>()), 0..400)
    ) {
        let data: Vec<u8> = ops.iter().flat_map(|(op, args)| std::iter::once(*op).chain(args.iter().copied())).collect();
        drive(&data);
    }
}
