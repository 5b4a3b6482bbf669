//! Fuzzes the decoders of what the Redis and PostgreSQL backends read back from the store
//! (entity records, priority arrays, history samples, change notifications): any text must
//! decode or fail cleanly, and what decodes must encode back to something that decodes
//! to the same value. A store written by something else, or damaged, gives errors, never a
//! panic.
#![no_main]

use buildwire_haystack::backends::common::{
    StoredEntity, change_batches, decode_array, decode_change, decode_sample, encode_array,
    encode_change, encode_sample, index_terms,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(entity) = StoredEntity::from_record(text) {
        let again = StoredEntity::from_record(&entity.to_record());
        assert_eq!(again.as_ref().map(|e| (e.seq, e.version)), Ok((entity.seq, entity.version)));
        let _ = index_terms(&entity.dict);
    }
    if let Ok(array) = decode_array(text) {
        assert_eq!(decode_array(&encode_array(&array)), Ok(array));
    }
    if let Ok(sample) = decode_sample(text) {
        let again = decode_sample(&encode_sample(&sample));
        assert!(again.is_ok());
    }
    if let Some((origin, ids)) = decode_change(text) {
        let batches = change_batches(&ids, 64);
        assert_eq!(batches.concat().len(), ids.len());
        let _ = decode_change(&encode_change(&origin, 1, &ids));
    }
});
