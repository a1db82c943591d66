//! How long one password hash takes here with the parameters in force (`people::M_COST_KIB`,
//! `T_COST`, `P_COST`): `cargo run --release -p horst-identity --example password_cost`.
//! A sign-in costs one verification of this size on a blocking thread.

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // The first call also builds the dummy hash; leave it out.
        horst_identity::people::hash_password("warm up")
            .await
            .expect("hash");
        let n = 10;
        let start = std::time::Instant::now();
        for i in 0..n {
            horst_identity::people::hash_password(&format!("password {i}"))
                .await
                .expect("hash");
        }
        let each = start.elapsed() / n;
        println!(
            "argon2id m={} KiB t={} p={}: {:.1} ms per hash ({n} hashes)",
            horst_identity::people::M_COST_KIB,
            horst_identity::people::T_COST,
            horst_identity::people::P_COST,
            each.as_secs_f64() * 1000.0
        );
    });
}
