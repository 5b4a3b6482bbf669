//! The `cov` fuzz target's driver run under proptest: random instruction streams
//! (subscriptions, cancellations, local changes, time steps, answers to confirmed
//! notifications) never panic, keep the subscription table within its limit and get every
//! subscription answered.

use proptest::prelude::*;

#[allow(dead_code)]
#[path = "../../bench/src/bacnet/profiles.rs"]
mod profiles;

include!("../fuzz/drivers/cov.rs");

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_instruction_streams_keep_the_table_bounded(
        data in proptest::collection::vec(any::<u8>(), 0..800)
    ) {
        prop_assert!(drive(&data) <= LIMITS.max_subscriptions);
    }

    /// Mostly subscriptions from few subscribers, so the limits are reached.
    #[test]
    fn floods_of_subscriptions_stay_bounded(
        ops in proptest::collection::vec((0u8..3, any::<[u8; 3]>()), 0..200)
    ) {
        let data: Vec<u8> = ops
            .iter()
            .flat_map(|(op, args)| std::iter::once(*op).chain(args.iter().copied()))
            .collect();
        prop_assert!(drive(&data) <= LIMITS.max_subscriptions);
    }
}

#[test]
fn a_flood_reaches_the_limit_and_is_refused() {
    // 40 subscriptions to distinct objects from each of the four subscribers.
    let mut data = Vec::new();
    for subscriber in 0..4u8 {
        for object in 0..40u8 {
            data.extend([0, subscriber | (object << 2), object, 0x20]);
        }
    }
    // Each subscriber gets its share (5), and the table stops at its limit (12).
    assert_eq!(drive(&data), LIMITS.max_subscriptions);
}
