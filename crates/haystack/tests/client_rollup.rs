//! The client's own rollup (`client::rollup`) folds a plain `hisRead` answer exactly as our
//! server's store does: for every fold, the raw samples read from our server and folded by
//! the client equal the server's rolled-up answer.
#![allow(clippy::unwrap_used)]

use buildwire_haystack::client::rollup::{
    CLIENT_ROLLUP_TAG, fold_answer, is_rolled_up, parse_rollup,
};
use buildwire_haystack::client::{ClientOptions, HaystackApi, HaystackClient};
use buildwire_haystack::codec::zinc;
use buildwire_haystack::server::{HaystackServer, HaystackServerConfig};
use buildwire_haystack::value::{Number, Ref, Value};

const POINT: &str = "ver:\"3.0\"\nid,dis,point,his,kind,unit,tz\n\
    @p1,\"Power\",M,M,\"Number\",\"kW\",\"New_York\"\n";

fn ts(text: &str) -> buildwire_haystack::value::DateTime {
    match zinc::decode_value(text).unwrap() {
        Value::DateTime(ts) => *ts,
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_folds_equal_the_server_folds_for_every_fold() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let grid = zinc::decode_grid(POINT).unwrap();
        let server = HaystackServer::start(
            HaystackServerConfig::new()
                .bind("127.0.0.1:0".parse().unwrap())
                .load(grid),
        )
        .await
        .unwrap();
        let client = HaystackClient::connect(&server.url(), ClientOptions::default())
            .await
            .unwrap();
        let point = Ref::new("p1");
        // A day of 5-minute samples in New York time with a NaN, uneven values and a gap.
        let mut samples = Vec::new();
        for i in 0..288_i64 {
            if (100..130).contains(&i) {
                continue;
            }
            let at = ts(&format!(
                "2024-03-01T{:02}:{:02}:00-05:00 New_York",
                i / 12,
                (i % 12) * 5
            ));
            let value = if i == 7 {
                f64::NAN
            } else {
                ((i * 37) % 101) as f64 / 4.0
            };
            samples.push((at, Value::Number(Number::with_unit(value, "kW"))));
        }
        client.his_write(&point, &samples).await.unwrap();
        let range = "2024-03-01";
        let raw = client.his_read(&point, range).await.unwrap();
        assert!(!is_rolled_up(&raw));
        assert_eq!(raw.row_count(), samples.len());
        for interval in ["1h", "45min", "1day"] {
            let interval = zinc::decode_value(interval).unwrap();
            for fold in ["avg", "min", "max", "sum", "count", "first", "last"] {
                let by_server = client
                    .his_rollup(&point, range, interval.clone(), fold)
                    .await
                    .unwrap();
                assert!(is_rolled_up(&by_server));
                assert!(!by_server.meta.contains(CLIENT_ROLLUP_TAG));
                let rollup = parse_rollup(&interval, fold).unwrap();
                let by_client = fold_answer(&raw, range, &interval, &rollup).unwrap();
                assert!(by_client.meta.contains(CLIENT_ROLLUP_TAG));
                assert_eq!(
                    by_client.meta.get("hisRollup"),
                    by_server.meta.get("hisRollup")
                );
                assert_eq!(
                    by_client.row_count(),
                    by_server.row_count(),
                    "{fold} {interval:?}"
                );
                assert!(by_server.row_count() > 0);
                for row in 0..by_server.row_count() {
                    for col in ["ts", "val"] {
                        assert_eq!(
                            by_client.get(row, col),
                            by_server.get(row, col),
                            "{fold} {interval:?}, row {row}, {col}"
                        );
                    }
                }
            }
        }
        server.stop().await.unwrap();
    });
}
