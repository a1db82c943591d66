//! How long one password hash takes here with the parameters in force (`people::M_COST_KIB`,
//! `T_COST`, `P_COST`): `cargo run --release -p horst-identity --example password_cost`.
//! A sign-in costs one verification of this size on a blocking thread. Also what the list
//! of refused passwords costs: its first look (which reads it into a sorted slice) and a
//! look after that.

fn main() {
    let start = std::time::Instant::now();
    let first = horst_identity::people::is_common("correct horse battery");
    let build = start.elapsed();
    let n = 10_000;
    let start = std::time::Instant::now();
    let mut refused = usize::from(first);
    for i in 0..n {
        refused += usize::from(horst_identity::people::is_common(&format!("password{i}")));
    }
    let look = start.elapsed() / n;
    println!(
        "refused-password list ({} entries): first look {:.2} ms, then {:.2} µs a look ({refused} of {} refused)",
        horst_identity::people::COMMON_PASSWORDS,
        build.as_secs_f64() * 1000.0,
        look.as_secs_f64() * 1e6,
        n + 1
    );
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
