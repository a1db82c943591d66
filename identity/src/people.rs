//! People's game accounts: the "normal game account" of the contract, which signs in with a
//! password on `/account` and owns agent keys, and the same people's RCADIA sign-in
//! (`POST /api/v1/auth/session`). One store, one password format, one set of limits.
//!
//! Layout: the account is `account:<name>` (see `accounts`), `kind` `human`, with these
//! fields of its own:
//! - `password`: a PHC string (Argon2id, [`PARAMS`]); absent for accounts that cannot sign in
//!   (operator-made accounts without a password, deleted people)
//! - `role`: `operator` for people who may open `/admin`; absent otherwise
//! - `deletedAtMs`: set by `user delete` (the name stays taken: posts and revisions keep it)
//!
//! Hashing runs on a blocking thread. A sign-in for a name without a password still verifies
//! against a dummy hash of the same parameters, so the answer's timing does not tell which
//! names exist. Records of earlier versions (`auth:user:<name>`, salted PBKDF2-SHA256, kept by
//! `crate::auth`) are verified in their own format once, rehashed to PHC, and deleted.

use crate::auth::{Auth, CredentialGeneration, LegacyCheck};
use crate::web_sessions::{NewSession, Subject};
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};
use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::{lua, Store};
use redis::AsyncCommands;
use serde::Serialize;

use crate::accounts::valid_account_name;
use crate::redis_now_ms;
use crate::IdentityError;

/// Argon2id with 19 MiB, 2 passes, 1 lane (OWASP's first recommended setting): well under a
/// second per hash on the project's 2-core machine even under heavy load (see the
/// `password_cost` example), so a sign-in costs little and each guess costs as much.
pub const M_COST_KIB: u32 = 19 * 1024;
pub const T_COST: u32 = 2;
pub const P_COST: u32 = 1;

/// Password rules: at least this many characters that show (runs of spaces count as one;
/// control and invisible characters not at all)...
pub const PASSWORD_MIN_CHARS: usize = 8;
/// ...and at most this many bytes (bounds the hashing work a request can ask for).
pub const PASSWORD_MAX_BYTES: usize = 256;

/// No name a person signs in with is longer (names are 2-32 characters; this leaves room for
/// what a person types before it is made canonical): a longer one is wrong at once.
pub const SIGN_IN_NAME_MAX_BYTES: usize = 64;

fn argon2() -> Argon2<'static> {
    // The constants are valid parameters; `Params::new` only refuses out-of-range values.
    let params = Params::new(M_COST_KIB, T_COST, P_COST, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The start of every PHC string made with the current parameters: a stored hash that does
/// not start with it is rehashed at the next successful sign-in.
fn current_prefix() -> String {
    format!("$argon2id$v=19$m={M_COST_KIB},t={T_COST},p={P_COST}$")
}

/// A PHC string for `password` with a fresh 16-byte salt. CPU-heavy: call on a blocking
/// thread ([`hash_password`]).
fn hash_blocking(password: &str) -> Result<String, IdentityError> {
    count_argon2_run();
    let salt = horst_store::random::secret_bytes(16).map_err(IdentityError::Internal)?;
    argon2()
        .hash_password_with_salt(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| IdentityError::internal(format!("argon2: {e}")))
}

/// Argon2 runs of this process (tests count them).
#[cfg(test)]
static ARGON2_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn count_argon2_run() {
    #[cfg(test)]
    ARGON2_RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// A hash nobody's password matches, verified for names without one (equal timing): made
/// once with the current parameters (`hash_blocking` of a sentence), kept as text so that no
/// process makes it at its first such sign-in (that first one took two Argon2 runs and so
/// told that the name did not exist). A test checks it has the current parameters.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$lIWZzK6xnUtiCepNAroEEA$z3UphnGqK4wAPJCf+4W+cv2nvYAllKtRSSz1HWDmY4c";

fn verify_blocking(stored: Option<&str>, password: &str) -> bool {
    count_argon2_run();
    let ok = argon2()
        .verify_password(password.as_bytes(), stored.unwrap_or(DUMMY_HASH))
        .is_ok();
    // The work is the same either way; only a stored hash can match.
    ok && stored.is_some()
}

/// Argon2 runs of this process at once, whatever their callers do. The API's own queue
/// (`password_work`) is held by the request, and a client that disconnects drops it while
/// its blocking hash runs on: clients that send and close could start any number of 19 MiB
/// hashes. The turn is taken on the blocking thread, so it lasts exactly as long as the work.
const ARGON2_AT_ONCE: usize = 4;

/// Argon2 runs going on now and the most there ever were (tests read the peak).
struct Argon2Load {
    running: usize,
    peak: usize,
}

static ARGON2_LOAD: std::sync::Mutex<Argon2Load> = std::sync::Mutex::new(Argon2Load {
    running: 0,
    peak: 0,
});
static ARGON2_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// One Argon2 run's turn, taken on a blocking thread (it waits there for a free one).
struct Argon2Turn;

impl Argon2Turn {
    fn take() -> Argon2Turn {
        let mut load = ARGON2_LOAD.lock().unwrap_or_else(|e| e.into_inner());
        while load.running >= ARGON2_AT_ONCE {
            load = ARGON2_FREED.wait(load).unwrap_or_else(|e| e.into_inner());
        }
        load.running += 1;
        load.peak = load.peak.max(load.running);
        Argon2Turn
    }
}

impl Drop for Argon2Turn {
    fn drop(&mut self) {
        let mut load = ARGON2_LOAD.lock().unwrap_or_else(|e| e.into_inner());
        load.running = load.running.saturating_sub(1);
        ARGON2_FREED.notify_one();
    }
}

/// Argon2 runs going on now.
#[doc(hidden)]
pub fn argon2_running() -> usize {
    ARGON2_LOAD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .running
}

/// The most Argon2 runs this process had going at once.
#[doc(hidden)]
pub fn argon2_peak() -> usize {
    ARGON2_LOAD.lock().unwrap_or_else(|e| e.into_inner()).peak
}

/// Hashes on a blocking thread.
pub async fn hash_password(password: &str) -> Result<String, IdentityError> {
    let password = password.to_string();
    tokio::task::spawn_blocking(move || {
        let _turn = Argon2Turn::take();
        hash_blocking(&password)
    })
    .await
    .map_err(|e| IdentityError::internal(format!("hashing thread: {e}")))?
}

/// Verifies on a blocking thread; `None` (no password) verifies against the dummy hash.
async fn verify(stored: Option<String>, password: &str) -> Result<bool, IdentityError> {
    let password = password.to_string();
    tokio::task::spawn_blocking(move || {
        let _turn = Argon2Turn::take();
        verify_blocking(stored.as_deref(), &password)
    })
    .await
    .map_err(|e| IdentityError::internal(format!("hashing thread: {e}")))
}

/// The passwords that are refused (`identity/common-passwords.txt`, about 21,700 of 8
/// characters or more, 200 KB in the binary): passwords from breach corpora, as NIST SP
/// 800-63B (5.1.1.2) asks, and horst's own list. `ops/common-passwords` makes it from its
/// sources (their notices: `identity/common-passwords.NOTICE`): one password a line,
/// cleaned and lowercased as [`is_common`] cleans what it looks up, sorted.
const COMMON: &str = include_str!("../common-passwords.txt");

/// How many passwords the list holds, as the refusal says (a test checks it).
pub const COMMON_PASSWORDS: usize = 21_667;

/// The list as a sorted slice, made once at the first look (a few milliseconds: only
/// setting a password looks, never a sign-in) and searched by bisection.
fn common() -> &'static [&'static str] {
    static LIST: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        let mut list: Vec<&str> = COMMON.lines().filter(|l| !l.is_empty()).collect();
        // The file is sorted (a test checks it); sorting a sorted list costs one pass, and
        // a hand-edited line out of order cannot make a lookup miss.
        list.sort_unstable();
        list.dedup();
        list
    })
}

/// Whether `password` is on the shipped list of refused passwords (any case, and with
/// invisible characters and extra spaces ignored: `pass\u{200b}word` is `password`).
pub fn is_common(password: &str) -> bool {
    let lower = horst_text::clean_line(password).to_lowercase();
    common().binary_search(&lower.as_str()).is_ok()
}

/// Whether `password` may be set; the error says what the rules are.
pub fn check_password(name: &str, password: &str) -> Result<(), IdentityError> {
    // What the rules look at: eight spaces, zero-width spaces or NULs are eight characters
    // but one guess. The password itself is hashed as typed.
    let shown = horst_text::clean_line(password);
    if shown.chars().count() < PASSWORD_MIN_CHARS {
        return Err(IdentityError::invalid(format!(
            "the password needs at least {PASSWORD_MIN_CHARS} characters (spaces in a row count as one; invisible and control characters do not count)"
        )));
    }
    if password.len() > PASSWORD_MAX_BYTES {
        return Err(IdentityError::invalid(format!(
            "the password may have at most {PASSWORD_MAX_BYTES} bytes"
        )));
    }
    if mostly_the_name(&shown, name) {
        return Err(IdentityError::invalid(format!(
            "the password must not be the account name, nor the name with fewer than {PASSWORD_MIN_CHARS} other characters around it (the name is guessed first, then with digits added)"
        )));
    }
    if is_common(password) {
        return Err(IdentityError::invalid(format!(
            "this password is on horst's list of {COMMON_PASSWORDS} passwords from leaked password lists (data breaches): it is among the most common passwords, which are guessed first, whatever its case; choose another (several unrelated words are easy to remember and hard to guess)"
        )));
    }
    Ok(())
}

/// Whether `shown` (the password as the rules see it) is the account name, or the name with
/// too little else around it to count as a password of its own ("fuchs1234" for `fuchs`):
/// guessers try the name, then the name with digits and years added. The name is compared
/// without regard to case; what is left once each occurrence is taken out must reach the
/// minimum length by itself.
fn mostly_the_name(shown: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let lower = shown.to_lowercase();
    let name = name.to_lowercase();
    if !lower.contains(&name) {
        return false;
    }
    lower.replace(&name, "").chars().count() < PASSWORD_MIN_CHARS
}

/// Whether `name` may be a person's account name; the error says what is allowed.
pub fn check_name(name: &str) -> Result<(), IdentityError> {
    if !valid_account_name(name) {
        return Err(IdentityError::invalid(format!(
            "{name:?} is not a valid account name: 2-32 lowercase letters, digits, _ or -"
        )));
    }
    // `agt_` is how agent ids begin (`sessions.house_identity` names one).
    if name.starts_with("agent-") || name.starts_with("agt_") || horst_text::reserved(name) {
        return Err(IdentityError::invalid(format!(
            "the name {name:?} is reserved; choose another"
        )));
    }
    Ok(())
}

/// A person's account as pages and the operator see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    pub name: String,
    /// The name the person chose to be shown by (`displayName`), when they chose one: pages
    /// greet them by it, and sign in by `name`.
    pub display_name: Option<String>,
    pub trust: u8,
    pub blocked: bool,
    pub operator: bool,
    pub created_at_ms: u64,
}

/// The person `name` (a human account that can sign in), or `None`.
pub async fn load(store: &Store, name: &str) -> Result<Option<Person>, IdentityError> {
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(store.key(&format!("account:{name}")))
        .arg(&[
            "kind",
            "trust",
            "blocked",
            "role",
            "createdAtMs",
            "password",
            "displayName",
        ])
        .query_async(&mut store.conn())
        .await?;
    let get = |i: usize| v.get(i).cloned().flatten();
    if get(0).as_deref() != Some("human") || get(5).is_none() {
        return Ok(None);
    }
    Ok(Some(Person {
        name: name.to_string(),
        display_name: get(6).filter(|d| !d.is_empty()),
        trust: get(1).and_then(|t| t.parse().ok()).unwrap_or(0),
        blocked: get(2).as_deref() == Some("1"),
        operator: get(3).as_deref() == Some("operator"),
        created_at_ms: get(4).and_then(|t| t.parse().ok()).unwrap_or(0),
    }))
}

/// `lua/password_first.lua`: a person told their account exists keeps it after a failover.
static PASSWORD_FIRST: Script<String> = Script::new(Decl {
    file: lua!("lua/password_first.lua"),
    keys: 1,
    argv: Argv::Exactly(5),
    writes: Writes::Durable,
});

/// Whether a password may go to an existing account without one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Only a new account (sign-up: a name that exists, even without a password, stays its
    /// owner's).
    Refuse,
    /// An operator-made or deleted human account may get one (`user create`).
    GivePassword,
}

async fn set_first_password(
    store: &Store,
    name: &str,
    trust: u8,
    hash: &str,
    existing: Existing,
) -> Result<bool, IdentityError> {
    let now = redis_now_ms(store).await?;
    let r: String = PASSWORD_FIRST
        .call(store)
        .key(store.key(&format!("account:{name}")))
        .arg(name)
        .arg(trust)
        .arg(now)
        .arg(hash)
        .arg(match existing {
            Existing::Refuse => "new",
            Existing::GivePassword => "any",
        })
        .run()
        .await?;
    Ok(r == "ok")
}

/// Creates a person's account (trust `trust`) with `password`; with
/// [`Existing::GivePassword`] it also gives an existing human account without a password (one
/// the operator made, or a deleted person's) this password. An agent account, a person who
/// has a password, or a name an earlier version's RCADIA user holds is a `conflict`.
pub async fn create(
    store: &Store,
    auth: &Auth,
    name: &str,
    password: &str,
    trust: u8,
    existing: Existing,
) -> Result<(), IdentityError> {
    check_name(name)?;
    check_password(name, password)?;
    if trust > 2 {
        return Err(IdentityError::invalid("trust must be 0, 1 or 2"));
    }
    if auth.legacy_user_exists(name).await? {
        return Err(IdentityError::conflict(format!("the name {name} is taken")));
    }
    let hash = hash_password(password).await?;
    if set_first_password(store, name, trust, &hash, existing).await? {
        Ok(())
    } else {
        Err(IdentityError::conflict(format!("the name {name} is taken")))
    }
}

/// The caps sign-up obeys: self-service keys' (a new person is one more trust-0 identity
/// from that network) and its own (`gateway.sign_up_per_network_per_day`,
/// `gateway.sign_up_per_day`), all rolling over 24 hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignUpCaps {
    pub per_network: u32,
    pub total: u32,
}

impl SignUpCaps {
    pub fn from_config(g: &horst_config::GatewayConfig) -> SignUpCaps {
        SignUpCaps {
            per_network: g.sign_up_per_network_per_day,
            total: g.sign_up_per_day,
        }
    }
}

/// Sign-up's caps, shared by [`SIGN_UP`] and [`SIGN_UP_ROOM`].
const SIGN_UP_CAPS: horst_store::script::LuaFile = lua!("lua/sign_up_caps.lua");

/// `lua/sign_up.lua`: reply `(outcome, ms)`.
static SIGN_UP: Script<(String, u64)> = Script::with_helpers(
    Decl {
        file: lua!("lua/sign_up.lua"),
        keys: 6,
        argv: Argv::Exactly(9),
        writes: Writes::Durable,
    },
    SIGN_UP_CAPS,
);

/// `lua/sign_up_room.lua`: reply `(outcome, ms)`.
static SIGN_UP_ROOM: Script<(String, u64)> = Script::with_helpers(
    Decl {
        file: lua!("lua/sign_up_room.lua"),
        keys: 5,
        argv: Argv::Exactly(6),
        writes: Writes::ReadOnly,
    },
    SIGN_UP_CAPS,
);

/// `lua/sign_up_taken.lua`: reply 1.
static SIGN_UP_TAKEN: Script<i64> = Script::new(Decl {
    file: lua!("lua/sign_up_taken.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
    writes: Writes::PrimaryOnly,
});

/// `lua/password_rehash.lua`: reply 1 (replaced) or 0 (the stored hash changed since).
/// A rehash lost in a failover is made again at the next sign-in.
static PASSWORD_REHASH: Script<i64> = Script::new(Decl {
    file: lua!("lua/password_rehash.lua"),
    keys: 1,
    argv: Argv::Exactly(2),
    writes: Writes::PrimaryOnly,
});

pub(crate) fn scripts() -> [&'static dyn horst_store::script::Registered; 6] {
    [
        &SIGN_UP,
        &SIGN_UP_ROOM,
        &SIGN_UP_TAKEN,
        &PASSWORD_FIRST,
        &PASSWORD_REHASH,
        &CREDENTIALS_END,
    ]
}

/// Taken names one network is told of in 24 hours (rolling); past them its sign-ups are
/// `network_cap`. Sign-up must say that a name is taken, so it is the one answer that tells
/// which names exist: without a bound of its own a taken name spent none of the caps, and a
/// network asked about names at its attempts' limit (10 a minute per address) all day.
pub const TAKEN_NAMES_PER_NETWORK: u32 = 10;

/// The caps' zsets of sign-ups from `network`, as sign_up.lua and sign_up_room.lua take
/// them first in KEYS.
fn cap_keys(store: &Store, network: &str) -> [String; 5] {
    [
        store.key(&format!("agentkeys:net:{network}")),
        store.key("agentkeys:all"),
        store.key(&format!("signup:net:{network}")),
        store.key("signup:all"),
        store.key(&format!("signup:taken:{network}")),
    ]
}

/// A sign-up script's reply as a result: `ok` is `Ok(ms)`, a cap [`IdentityError::Cap`].
fn sign_up_reply(name: &str, outcome: &str, ms: u64) -> Result<u64, IdentityError> {
    let retry_after_seconds = ms.div_ceil(1000).max(1);
    match outcome {
        "ok" => Ok(ms),
        "exists" => Err(IdentityError::conflict(format!("the name {name} is taken"))),
        "network_cap" => Err(IdentityError::Cap {
            cap: crate::KeyCap::Network,
            message: "your network has made as many new accounts and agent keys as it may in 24 hours; try again later or ask the operator".into(),
            retry_after_seconds,
        }),
        "daily_cap" => Err(IdentityError::Cap {
            cap: crate::KeyCap::Daily,
            message: "horst has taken as many new accounts and agent keys as it may in 24 hours; try again later or ask the operator".into(),
            retry_after_seconds,
        }),
        "taken_cap" => Err(taken_cap(ms)),
        other => Err(IdentityError::internal(format!("sign-up script: {other:?}"))),
    }
}

/// Whether the self-service caps and `caps` leave room for one more creation from `network`
/// (read only, `lua/sign_up_room.lua`): `("ok", 0)`, or the cap reached and the ms until
/// there is room. Looked at before anything that tells whether a name exists.
pub(crate) async fn room(
    store: &Store,
    network: &str,
    caps: SignUpCaps,
) -> Result<(String, u64), IdentityError> {
    use crate::accounts::{SELF_SERVICE_PER_NETWORK, SELF_SERVICE_TOTAL, SELF_SERVICE_WINDOW_MS};
    Ok(SIGN_UP_ROOM
        .call(store)
        .key(cap_keys(store, network).as_slice())
        .arg(SELF_SERVICE_WINDOW_MS)
        .arg(SELF_SERVICE_PER_NETWORK)
        .arg(SELF_SERVICE_TOTAL)
        .arg(caps.per_network)
        .arg(caps.total)
        .arg(TAKEN_NAMES_PER_NETWORK)
        .run()
        .await?)
}

/// The network was told of [`TAKEN_NAMES_PER_NETWORK`] taken names; room in `wait_ms`.
pub(crate) fn taken_cap(wait_ms: u64) -> IdentityError {
    IdentityError::Cap {
        cap: crate::KeyCap::Network,
        message: format!("your network was told of {TAKEN_NAMES_PER_NETWORK} taken names in 24 hours (sign-up's \"taken\", a self-service displayName equal to an account's name), and may make no new account or agent key until the oldest is a day old; try again later, or ask the operator"),
        retry_after_seconds: wait_ms.div_ceil(1000).max(1),
    }
}

/// Counts a taken name told to `network` by another answer than sign-up's (a self-service
/// key's refused `displayName`) against [`TAKEN_NAMES_PER_NETWORK`].
pub(crate) async fn count_taken_name(store: &Store, network: &str) -> Result<(), IdentityError> {
    let _: i64 = SIGN_UP_TAKEN
        .call(store)
        .key(store.key(&format!("signup:taken:{network}")))
        .arg(crate::accounts::SELF_SERVICE_WINDOW_MS)
        .arg(crate::random_hex(8)?)
        .run()
        .await?;
    Ok(())
}

/// Sign-up on `/account`: a new person (trust 0) with `password`, from `client`, within
/// [`SignUpCaps`]; a cap is [`IdentityError::Cap`] with the seconds until there is room.
/// The caps are looked at before the name and before the password is hashed: a refused
/// sign-up costs no hash, and once the caps are spent nobody learns which names exist. The
/// write checks them again atomically. Answered only once the replicas have it (a durable
/// write).
pub async fn sign_up(
    store: &Store,
    auth: &Auth,
    name: &str,
    password: &str,
    client: std::net::IpAddr,
    caps: SignUpCaps,
) -> Result<(), IdentityError> {
    use crate::accounts::{
        network_of, SELF_SERVICE_PER_NETWORK, SELF_SERVICE_TOTAL, SELF_SERVICE_WINDOW_MS,
    };
    check_name(name)?;
    check_password(name, password)?;
    let network = network_of(client);
    let cap_keys = cap_keys(store, &network);
    let (outcome, ms) = room(store, &network, caps).await?;
    sign_up_reply(name, &outcome, ms)?;
    if auth.legacy_user_exists(name).await? {
        count_taken_name(store, &network).await?;
        return Err(IdentityError::conflict(format!("the name {name} is taken")));
    }
    let hash = hash_password(password).await?;
    let member = crate::random_hex(8)?;
    let (outcome, ms) = SIGN_UP
        .call(store)
        .key(cap_keys.as_slice())
        .key(store.key(&format!("account:{name}")))
        .arg(SELF_SERVICE_WINDOW_MS)
        .arg(SELF_SERVICE_PER_NETWORK)
        .arg(SELF_SERVICE_TOTAL)
        .arg(caps.per_network)
        .arg(caps.total)
        .arg(TAKEN_NAMES_PER_NETWORK)
        .arg(&member)
        .arg(name)
        .arg(&hash)
        .run()
        .await?;
    sign_up_reply(name, &outcome, ms).map(|_| ())
}

/// What a sign-in found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// The password is right; the person (their canonical name) may have a session, opened
    /// in the credential generation read before the password was checked
    /// ([`open_session`], [`Auth::issue_jwt`]).
    Ok(Person, CredentialGeneration),
    /// A wrong password for an account that exists (answered as [`SignIn::Unknown`] is).
    Wrong,
    /// No account by this name. Answered exactly as [`SignIn::Wrong`] (callers never tell
    /// them apart), but recorded and logged without the typed name: that is often a password
    /// typed into the name field.
    Unknown,
    /// The password is right but the account is blocked.
    Blocked,
}

/// The canonical form of a typed name: trimmed and lowercase (account names are lowercase).
pub fn canonical(name: &str) -> String {
    name.trim().to_lowercase()
}

/// Checks a person's password (the sign-in burst limits are the caller's, `horst-limits`).
/// A correct password of an earlier version's RCADIA user moves them here (PHC hash) and
/// deletes the old record; a hash with older parameters is rehashed.
pub async fn sign_in(
    store: &Store,
    auth: &Auth,
    typed_name: &str,
    password: &str,
) -> Result<SignIn, IdentityError> {
    let name = canonical(typed_name);
    // A name no account can have is never looked up: it would name another key (`olga:keys`
    // reads the set of olga's keys, and its type error told that she has some). No earlier
    // version's user with such a name can move here either (`migrate`).
    if password.len() > PASSWORD_MAX_BYTES
        || name.len() > SIGN_IN_NAME_MAX_BYTES
        || !crate::accounts::valid_account_name(&name)
    {
        // Still costs a verification, so odd input does not answer faster.
        verify(None, "").await?;
        return Ok(SignIn::Unknown);
    }
    // Read before the password is: a password change or a block after this point moves the
    // generation on, so what this sign-in opens (a JWT, a browser session) ends with it.
    let generation = auth.generation(&name).await?;
    let key = store.key(&format!("account:{name}"));
    let v: Vec<Option<String>> = redis::cmd("HMGET")
        .arg(&key)
        .arg(&["kind", "password"])
        .query_async(&mut store.conn())
        .await?;
    let kind = v.first().cloned().flatten();
    let stored = v.get(1).cloned().flatten();
    if kind.as_deref() == Some("human") && stored.is_some() {
        if !verify(stored.clone(), password).await? {
            return Ok(SignIn::Wrong);
        }
        if let Some(old) = stored.filter(|s| !s.starts_with(&current_prefix())) {
            // Only over the hash just verified: a password changed meanwhile stays.
            let fresh = hash_password(password).await?;
            let _: i64 = PASSWORD_REHASH
                .call(store)
                .key(&key)
                .arg(old)
                .arg(fresh)
                .run()
                .await?;
        }
        return finish(store, &name, generation).await;
    }
    // An earlier version's user, by the name as typed (those names could have capitals).
    let typed = typed_name.trim();
    match auth.legacy_check(typed, password).await? {
        LegacyCheck::NoUser => {
            verify(None, password).await?;
            // An account without a password (an agent's, a deleted person's) is a name.
            Ok(if kind.is_some() {
                SignIn::Wrong
            } else {
                SignIn::Unknown
            })
        }
        LegacyCheck::Wrong => Ok(SignIn::Wrong),
        LegacyCheck::Right => migrate(store, auth, typed, &name, password, generation).await,
    }
}

/// Moves an earlier version's user whose password was just verified into a person's account.
async fn migrate(
    store: &Store,
    auth: &Auth,
    typed: &str,
    name: &str,
    password: &str,
    generation: CredentialGeneration,
) -> Result<SignIn, IdentityError> {
    if check_name(name).is_err() {
        tracing::warn!(
            user = %typed,
            "an earlier version's user signed in, but the name is not a valid account name; set a new one with `horst admin user create`"
        );
        return Ok(SignIn::Wrong);
    }
    let hash = hash_password(password).await?;
    // Only into a new account: one that exists already, even without a password (made by
    // the operator, its keys and revisions in use), was never this user's, and the old
    // version kept its users apart from those accounts. Given a password here, whoever held
    // the old record took the account over, keys, trust and revisions.
    if !set_first_password(store, name, 0, &hash, Existing::Refuse).await? {
        tracing::warn!(
            user = %typed,
            "an earlier version's user signed in, but account {name} exists already and is not theirs to take; the old record stays, and this user cannot sign in under that name"
        );
        return Ok(SignIn::Wrong);
    }
    auth.drop_legacy_user(typed).await?;
    tracing::info!(user = %name, "moved an earlier version's user to a PHC password hash");
    finish(store, name, generation).await
}

async fn finish(
    store: &Store,
    name: &str,
    generation: CredentialGeneration,
) -> Result<SignIn, IdentityError> {
    match load(store, name).await? {
        Some(p) if p.blocked => Ok(SignIn::Blocked),
        Some(p) => Ok(SignIn::Ok(p, generation)),
        None => Ok(SignIn::Wrong),
    }
}

/// Sets a new password; every session and JWT of the person ends (the caller's own session
/// included: they sign in again with the new password). Agent keys stay.
pub async fn set_password(
    store: &Store,
    auth: &Auth,
    name: &str,
    password: &str,
) -> Result<(), IdentityError> {
    change_password(store, auth, name, password, false)
        .await
        .map(|_| ())
}

/// What a password change did besides: the agent keys it revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasswordChanged {
    /// Prefixes of the keys revoked, newest first.
    pub keys_revoked: Vec<String>,
}

/// Sets a new password and ends every session and JWT of the person, and revokes every
/// agent key of theirs when `revoke_keys`: all in one step ([`end_credentials`]), so an error
/// means nothing changed, and a change that took effect took effect whole (before, the keys
/// were revoked one by one after the password had changed, and a failure there answered an
/// error for a change that had been made, the keys still working).
pub async fn change_password(
    store: &Store,
    auth: &Auth,
    name: &str,
    password: &str,
    revoke_keys: bool,
) -> Result<PasswordChanged, IdentityError> {
    if load(store, name).await?.is_none() {
        return Err(no_person(name));
    }
    check_password(name, password)?;
    let hash = hash_password(password).await?;
    let Some(keys_revoked) = end_credentials(store, auth, name, Some(&hash), revoke_keys).await?
    else {
        return Err(no_person(name));
    };
    Ok(PasswordChanged { keys_revoked })
}

fn no_person(name: &str) -> IdentityError {
    IdentityError::not_found(format!(
        "no person {name} with a password; give an operator-made account one with `horst admin user create {name}`"
    ))
}

/// Ends every browser session and JWT of `name` (block, deletion, sign-out everywhere).
///
/// The generation moves and the sessions' index is emptied in one step
/// ([`end_credentials`]): a sign-in that checked the password before and opens its session
/// after sees the new generation ([`open_session`] ends that session itself).
pub async fn end_sessions(store: &Store, auth: &Auth, name: &str) -> Result<(), IdentityError> {
    end_credentials(store, auth, name, None, false)
        .await
        .map(|_| ())
}

/// `lua/credentials_end.lua`: an ended session or key stays ended through a failover.
static CREDENTIALS_END: Script<(i64, Vec<String>, Vec<String>)> = Script::new(Decl {
    file: lua!("lua/credentials_end.lua"),
    keys: 5,
    argv: Argv::Exactly(2),
    writes: Writes::Durable,
});

/// Ends every JWT and browser session of `name`, with a new password (`hash`, a PHC string)
/// and every agent key revoked when asked, in one durable step (`lua/credentials_end.lua`).
/// `None`: `hash` was given for a name that is not a person with a password; nothing
/// changed. Else the prefixes of the keys revoked.
///
/// After the step, what no longer opens anything is tidied: the session records are deleted
/// and the key records marked revoked (so listings of revoked keys name them). A failure
/// there is logged and changes nothing that matters: a session works only while its
/// person's index holds it ([`crate::web_sessions::load`]), a key only while its account's
/// set of active keys does ([`crate::accounts::authenticate`]).
async fn end_credentials(
    store: &Store,
    auth: &Auth,
    name: &str,
    hash: Option<&str>,
    revoke_keys: bool,
) -> Result<Option<Vec<String>>, IdentityError> {
    // The keys as they were, for their prefixes should the tidying fail (a record that
    // cannot be read must not stop the change: the script revokes by the set).
    let before = if revoke_keys {
        match crate::accounts::list_keys(store, Some(name), false, 0, usize::MAX).await {
            Ok(page) => page.items,
            Err(e) => {
                tracing::warn!(account = %name, error = %e, "cannot read the keys before revoking them");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let (done, sessions, keys) = CREDENTIALS_END
        .call(store)
        .key(store.key(&format!("account:{name}")))
        .key(store.key(&format!("account:{name}:keys")))
        .key(store.key(&format!("account:{name}:websessions")))
        .key(store.key(&format!("auth:usergen:{name}")))
        .key(store.key("auth:epoch"))
        .arg(hash.unwrap_or(""))
        .arg(if revoke_keys { "1" } else { "0" })
        .run()
        .await?;
    if done != 1 {
        return Ok(None);
    }
    auth.announce_revocation().await;
    if let Err(e) = crate::web_sessions::forget(store, &sessions).await {
        tracing::warn!(account = %name, error = %e, "the ended sessions' records stay until they expire (they open nothing)");
    }
    let revoked = match crate::accounts::mark_revoked(store, &keys).await {
        Ok(prefixes) => prefixes,
        Err(e) => {
            tracing::warn!(account = %name, error = %e, "the revoked keys' records are not marked revoked (the keys are refused all the same)");
            // Those listed before; a key made in between is revoked but not named.
            before
                .into_iter()
                .filter(|k| keys.contains(&k.hash))
                .map(|k| k.prefix)
                .collect()
        }
    };
    Ok(Some(revoked))
}

/// Opens a browser session for the person `subject` names (their account or their operator
/// role), whose password was checked in `generation` ([`SignIn::Ok`]).
/// If their credentials changed since (a new password, a block), the session is ended at
/// once and the sign-in refused: it must not outlive the change that [`end_sessions`]
/// made while this one was being checked.
pub async fn open_session(
    store: &Store,
    auth: &Auth,
    subject: Subject,
    generation: CredentialGeneration,
) -> Result<NewSession, IdentityError> {
    let name = match &subject {
        Subject::Account(name) | Subject::Operator(name) => name.clone(),
        Subject::AdminToken { .. } => {
            return Err(IdentityError::internal(
                "an admin token's session has no person and no credential generation",
            ))
        }
    };
    let new = crate::web_sessions::create(store, subject.clone()).await?;
    if auth.generation(&name).await? != generation {
        crate::web_sessions::end_new(store, &subject, &new).await?;
        return Err(IdentityError::conflict(
            "the password or the account changed while signing in; sign in again",
        ));
    }
    Ok(new)
}

/// [`crate::web_sessions::renew`] for a session whose person gave their password again,
/// checked in `generation` (`None` for an admin token's session): if their credentials
/// changed since (a new password, a block), the new session is ended at once and the
/// renewal refused, as [`open_session`] refuses a sign-in. `None`: the old session had ended.
pub async fn renew_session(
    store: &Store,
    auth: &Auth,
    old: &crate::web_sessions::WebSession,
    generation: Option<CredentialGeneration>,
) -> Result<Option<NewSession>, IdentityError> {
    let Some(new) = crate::web_sessions::renew(store, old).await? else {
        return Ok(None);
    };
    if let (Subject::Account(name) | Subject::Operator(name), Some(generation)) =
        (&old.subject, generation)
    {
        if auth.generation(name).await? != generation {
            crate::web_sessions::end_new(store, &old.subject, &new).await?;
            return Err(IdentityError::conflict(
                "the password or the account changed meanwhile; sign in again",
            ));
        }
    }
    Ok(Some(new))
}

/// What deleting a person did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Deleted {
    pub name: String,
    pub keys_revoked: Vec<String>,
}

/// Deletes a person's sign-in: the password and operator role go, every session and JWT
/// ends, every agent key is revoked. The account record stays (its name stays taken, its
/// revisions and posts keep their author) and is marked deleted.
pub async fn delete(store: &Store, auth: &Auth, name: &str) -> Result<Deleted, IdentityError> {
    let key = store.key(&format!("account:{name}"));
    let kind: Option<String> = store.conn().hget(&key, "kind").await?;
    let legacy = auth.legacy_user_exists(name).await?;
    if kind.as_deref() != Some("human") && !legacy {
        return Err(IdentityError::not_found(format!("no person {name}")));
    }
    if kind.is_some() {
        let now = redis_now_ms(store).await?;
        let _: () = redis::pipe()
            .atomic()
            .hdel(&key, &["password", "role"])
            .ignore()
            .hset(&key, "deletedAtMs", now)
            .ignore()
            .query_async(&mut store.conn())
            .await?;
        store.barrier().await?;
    }
    auth.drop_legacy_user(name).await?;
    // Keys only of an account (a legacy user alone has none).
    let revoked = end_credentials(store, auth, name, None, kind.is_some())
        .await?
        .unwrap_or_default();
    Ok(Deleted {
        name: name.to_string(),
        keys_revoked: revoked,
    })
}

/// Gives or takes the operator role (`/admin` access for this person).
pub async fn set_operator(store: &Store, name: &str, operator: bool) -> Result<(), IdentityError> {
    let key = store.key(&format!("account:{name}"));
    let kind: Option<String> = store.conn().hget(&key, "kind").await?;
    if kind.as_deref() != Some("human") {
        return Err(IdentityError::not_found(format!(
            "no person {name}; only people's accounts (not agent accounts) can be operators"
        )));
    }
    if operator {
        let _: () = store.conn().hset(&key, "role", "operator").await?;
        store.barrier().await?;
    } else {
        let _: () = store.conn().hdel(&key, "role").await?;
        store.barrier().await?;
        // Sessions that opened /admin must not keep it.
        crate::web_sessions::end_for_account(store, name).await?;
    }
    Ok(())
}

/// Whether sign-up on `/account` is open: the stored switch, else `gateway.sign_up`.
pub async fn sign_up_open(
    store: &Store,
    config: &horst_config::Config,
) -> Result<bool, IdentityError> {
    let stored: Option<String> = store.conn().get(store.key("gateway:sign_up")).await?;
    Ok(match stored.as_deref() {
        Some("open") => true,
        Some("closed") => false,
        _ => config.gateway.sign_up,
    })
}

pub async fn set_sign_up(store: &Store, open: bool) -> Result<(), IdentityError> {
    let _: () = store
        .conn()
        .set(
            store.key("gateway:sign_up"),
            if open { "open" } else { "closed" },
        )
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_phc_strings_with_the_current_parameters() {
        let h = hash_blocking("correct horse").unwrap();
        assert!(h.starts_with(&current_prefix()), "{h}");
        assert!(verify_blocking(Some(&h), "correct horse"));
        assert!(!verify_blocking(Some(&h), "correct horsE"));
        assert!(!verify_blocking(None, "correct horse"));
        // The dummy costs what a stored hash of the current parameters costs.
        assert!(DUMMY_HASH.starts_with(&current_prefix()), "{DUMMY_HASH}");
        assert!(argon2::PasswordHash::new(DUMMY_HASH).is_ok());
        // A different salt each time.
        assert_ne!(h, hash_blocking("correct horse").unwrap());
        // Garbage never matches.
        assert!(!verify_blocking(Some("$argon2id$nonsense"), "x"));
    }

    /// The shipped list is in the form [`is_common`] relies on: one entry a line, each as
    /// the lookup cleans a password (so none is unreachable), 8 characters or more (shorter
    /// ones are refused anyway), sorted without repeats (so the file stays canonical and
    /// `ops/common-passwords` remakes it byte for byte), as many as the refusal says.
    #[test]
    fn the_common_password_list_is_clean_sorted_and_as_long_as_said() {
        let lines: Vec<&str> = COMMON.split_terminator('\n').collect();
        assert_eq!(lines.len(), COMMON_PASSWORDS);
        assert_eq!(common().len(), COMMON_PASSWORDS);
        for pair in lines.windows(2) {
            assert!(pair[0] < pair[1], "not sorted or repeated: {pair:?}");
        }
        for l in &lines {
            assert_eq!(
                horst_text::clean_line(l).to_lowercase(),
                *l,
                "not clean: {l:?}"
            );
            assert!(l.chars().count() >= PASSWORD_MIN_CHARS, "too short: {l:?}");
            assert!(is_common(l) && is_common(&l.to_uppercase()), "{l:?}");
        }
        // horst's own list is inside, as far as its entries can be passwords at all.
        let own = include_str!("../common-passwords-own.txt");
        for l in own.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            assert!(
                is_common(l),
                "{l:?} of common-passwords-own.txt is not in the list"
            );
        }
    }

    /// The environment variable that tells [`first_verification_without_a_password`] it
    /// runs alone in a process of its own.
    const FRESH: &str = "HORST_IDENTITY_FRESH_PROCESS";

    /// A sign-in for a name without a password (unknown, or an agent's) costs one Argon2
    /// run, as a wrong password does, from the first one in a process on: the dummy hash
    /// was made at the first such sign-in, so after every start the first probe of an
    /// unknown name took two runs (about twice as long) and told that the name did not
    /// exist. Run in a fresh process: what happens once per process.
    #[test]
    fn the_first_sign_in_of_a_name_without_a_password_costs_one_argon2_run() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "people::tests::first_verification_without_a_password",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(FRESH, "1")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{said}{err}");
        assert!(said.contains("1 passed"), "{said}");
    }

    #[test]
    #[ignore = "run alone in a fresh process by the_first_sign_in_of_a_name_without_a_password_costs_one_argon2_run"]
    fn first_verification_without_a_password() {
        if std::env::var_os(FRESH).is_none() {
            return;
        }
        use std::sync::atomic::Ordering::Relaxed;
        assert_eq!(ARGON2_RUNS.load(Relaxed), 0, "not a fresh process");
        assert!(!verify_blocking(
            None,
            "a password of a name that does not exist"
        ));
        assert_eq!(
            ARGON2_RUNS.load(Relaxed),
            1,
            "Argon2 runs of the first verification without a password"
        );
    }

    #[test]
    fn password_and_name_rules_say_what_is_allowed() {
        assert!(check_password("fuchs", "short")
            .unwrap_err()
            .to_string()
            .contains("8"));
        assert!(check_password("fuchs1234", "FUCHS1234").is_err());
        // The name with a little added is the name: guessed right after it.
        for near in [
            "fuchs1234",
            "Fuchs2026!",
            "123fuchs",
            "fuchsfuchs",
            "FUCHS-fuchs-1",
        ] {
            let e = check_password("fuchs", near).unwrap_err().to_string();
            assert!(e.contains("account name"), "{near}: {e}");
        }
        // With enough of its own around it, a password may contain the name.
        assert!(check_password("fuchs", "fuchs im gruenen wald").is_ok());
        assert!(check_password("ab", "crab apple tree").is_ok());
        assert!(check_password("fuchs", &"x".repeat(300)).is_err());
        assert!(check_password("fuchs", "lange genug").is_ok());
        // Characters that do not show do not count: each of these is one guess.
        for blank in [
            " ".repeat(8),
            "\u{200b}".repeat(8),
            "\0".repeat(8),
            "\t\n\r \t\n\r ".to_string(),
            format!("a{}", " ".repeat(7)),
            format!("abc{}defg", "\u{202e}".repeat(3)),
        ] {
            let e = check_password("fuchs", &blank).unwrap_err().to_string();
            assert!(e.contains("at least 8 characters"), "{blank:?}: {e}");
        }
        // Nor does hiding the name or a common password behind them.
        assert!(check_password("fuchs1234", " fuchs\u{200b}1234 ").is_err());
        assert!(check_password("fuchs", "pass\u{200b}word").is_err());
        // The list, in any case, with a message that says why.
        for common in ["password", "12345678", "PassWort123", "qwertzuiop"] {
            let e = check_password("fuchs", common).unwrap_err().to_string();
            assert!(e.contains("most common passwords"), "{common}: {e}");
        }
        // Passwords from the breach lists, not only the hand-made top of them, and a
        // password that is on none stays allowed.
        for leaked in [
            "LiverPool1",
            "blink182",
            "starwars1",
            "michelle1",
            "Friend of Joan",
        ] {
            let e = check_password("fuchs", leaked).unwrap_err().to_string();
            assert!(
                e.contains("leaked password lists") && e.contains("choose another"),
                "{leaked}: {e}"
            );
        }
        assert!(check_password("fuchs", "amsel drossel fink star").is_ok());
        assert!(check_name("Fuchs").is_err());
        assert!(check_name("agent-1234abcd").is_err());
        // An agent id's form: a person named so could pass for the house agent.
        assert!(check_name("agt_1f2e3d4c").is_err());
        assert!(check_name("fuchs").is_ok());
        assert_eq!(canonical("  Fuchs "), "fuchs");
    }

    /// The write's own check (the authority when two sign-ups race past the look before
    /// the hash) answers the cap before the name too: else a taken name was still told.
    #[tokio::test]
    async fn the_sign_up_script_answers_the_cap_before_the_name() {
        let redis = horst_testkit::RedisServer::start();
        let store = horst_store::Store::connect(&redis.url(), "t:")
            .await
            .unwrap();
        let sign_up = |name: &'static str, member: &'static str| {
            let store = &store;
            async move {
                SIGN_UP
                    .call(store)
                    .key(cap_keys(store, "n").as_slice())
                    .key(store.key(&format!("account:{name}")))
                    .arg(86_400_000u64)
                    .arg(100u32)
                    .arg(100u32)
                    .arg(1u32)
                    .arg(100u32)
                    .arg(TAKEN_NAMES_PER_NETWORK)
                    .arg(member)
                    .arg(name)
                    .arg(format!("hash of {member}"))
                    .run()
                    .await
                    .unwrap()
            }
        };
        assert_eq!(sign_up("fuchs", "m1").await.0, "ok");
        // The network's one sign-up is used: a taken name and a free one get the cap alike.
        assert_eq!(sign_up("fuchs", "m2").await.0, "network_cap");
        assert_eq!(sign_up("dachs", "m3").await.0, "network_cap");
    }
}
