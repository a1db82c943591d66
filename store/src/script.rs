//! The script registry: every Lua script horst runs is declared once, here or in its crate,
//! as a `static` next to the type its reply parses into.
//!
//! A declaration names the file (one script per file, whose header documents KEYS, ARGV and
//! the reply), how many KEYS and ARGV it takes, and what its writes need: none
//! ([`Writes::ReadOnly`], which Redis itself enforces), the primary only
//! ([`Writes::PrimaryOnly`]: counters, pops), or acknowledgement by `redis.min_replica_acks`
//! replicas before the caller is answered ([`Writes::Durable`]: `WAIT` on the same
//! connection, one of the durable pool's, [`Store::durable`] and [`Store::settle`]).
//!
//! Running a script:
//! - checks the KEYS and ARGV counts before anything is sent: a wrong count is an `Err`
//!   naming the script and what it declares, never a write to the wrong key;
//! - sends it by SHA (EVALSHA), and on NOSCRIPT (a restarted or failed-over Redis) with its
//!   source (EVAL, routed by its KEYS like EVALSHA, which caches it on that node);
//! - prepends the shared prelude (`store/lua/prelude.lua`: `now_ms()`, `day_of`,
//!   `to_midnight_s`, `utc_date`) and passes the store's clock offset after the declared
//!   ARGV, which the prelude takes off again; so every script reads the one clock
//!   ([`Store::now_ms`] is the Rust side of it) and a test can move it across a UTC midnight
//!   ([`Store::set_clock_offset_ms`]);
//! - of the prelude and a crate's helpers, sends only the definitions the script uses
//!   (`lua_shake.rs`): Redis runs the whole text on every call, and each unused helper cost
//!   a call about 1,100 instructions.
//!
//! Every key a script touches is passed in KEYS (Redis Cluster routes a script by them); the
//! tidy test (`tests/it/tidy.rs`) checks that no script builds a key from ARGV, that every
//! `.lua` file is registered and that each header's KEYS and ARGV match its declaration.
//! Pub/sub channels are not keys and go in ARGV.
//!
//! ```no_run
//! use horst_store::script::{Argv, Decl, Script, Writes};
//! use horst_store::{lua, Store};
//!
//! /// `tests/lua/set.lua`: sets KEYS[1] to ARGV[1]; the reply is 1.
//! static SET: Script<i64> = Script::new(Decl {
//!     file: lua!("tests/lua/set.lua"),
//!     keys: 1,
//!     argv: Argv::Exactly(1),
//!     writes: Writes::Durable,
//! });
//!
//! # async fn example(store: &Store) -> redis::RedisResult<()> {
//! let done: i64 = SET.call(store).key(store.key("greeting")).arg("hello").run().await?;
//! # Ok(()) }
//! ```
//!
//! A script with many arguments takes them as one struct (every field must be set, and the
//! order is written once, in its [`ScriptArgs`] impl). A `static` names the struct in its
//! `'static` form; [`ArgsOf`] lets `run` take it with borrows of any lifetime:
//!
//! ```no_run
//! use horst_store::script::{Args, ArgsOf, Argv, Decl, Script, ScriptArgs, Writes};
//! use horst_store::{lua, Store};
//!
//! struct SetArgs<'a> {
//!     key: String,
//!     value: &'a str,
//! }
//!
//! impl ScriptArgs for SetArgs<'_> {
//!     fn push(&self, to: &mut Args) {
//!         to.key(&self.key).arg(self.value);
//!     }
//! }
//!
//! impl ArgsOf for SetArgs<'static> {
//!     type At<'a> = SetArgs<'a>;
//! }
//!
//! static SET: Script<i64, SetArgs<'static>> = Script::new(Decl {
//!     file: lua!("tests/lua/set.lua"),
//!     keys: 1,
//!     argv: Argv::Exactly(1),
//!     writes: Writes::Durable,
//! });
//!
//! # async fn example(store: &Store) -> redis::RedisResult<i64> {
//! let args = SetArgs { key: store.key("greeting"), value: "hello" };
//! SET.run(store, &args).await
//! # }
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::sync::OnceLock;

use redis::{Cmd, FromRedisValue, ToRedisArgs};

use crate::Store;

/// The shared prelude, prepended to every registered script.
pub const PRELUDE: LuaFile = crate::lua!("lua/prelude.lua");

/// A Lua file of a crate: its path (for the tidy test) and its text (compiled in).
#[derive(Debug, Clone, Copy)]
pub struct LuaFile {
    pub path: &'static str,
    pub text: &'static str,
}

impl LuaFile {
    /// The file's name without `.lua`: how errors and logs name the script.
    pub fn name(&self) -> &'static str {
        let file = self.path.rsplit('/').next().unwrap_or(self.path);
        file.strip_suffix(".lua").unwrap_or(file)
    }
}

/// A Lua file by its path relative to the calling crate's `Cargo.toml`, compiled in:
/// `lua!("lua/pop_due.lua")`.
#[macro_export]
macro_rules! lua {
    ($file:literal) => {
        $crate::script::LuaFile {
            path: concat!(env!("CARGO_MANIFEST_DIR"), "/", $file),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $file)),
        }
    };
}

/// What a script's writes need before its caller may be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// It only reads. It runs with `#!lua flags=no-writes`, so Redis refuses any write in it
    /// (and runs it while the server refuses writes, out of memory or read-only).
    ReadOnly,
    /// Answered once the primary has it (counters, caches, pops): a failover may lose the
    /// latest of these, which costs nothing that matters.
    PrimaryOnly,
    /// Must survive a failover: after the script, `WAIT` for `redis.min_replica_acks`
    /// replicas on the same connection ([`Store::settle`]); too few in time is an error.
    Durable,
}

/// How many ARGV a script takes (the clock offset the registry appends is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Argv {
    Exactly(usize),
    /// This many named ones, then a list (its header says how the list is counted).
    AtLeast(usize),
}

impl Argv {
    /// The named ones: the highest `ARGV[n]` the header may list.
    pub fn named(self) -> usize {
        match self {
            Argv::Exactly(n) | Argv::AtLeast(n) => n,
        }
    }

    fn admits(self, n: usize) -> bool {
        match self {
            Argv::Exactly(m) => n == m,
            Argv::AtLeast(m) => n >= m,
        }
    }
}

/// A script's declaration.
#[derive(Debug, Clone, Copy)]
pub struct Decl {
    pub file: LuaFile,
    /// Exactly this many KEYS.
    pub keys: usize,
    pub argv: Argv,
    pub writes: Writes,
}

/// The marker of a script called with positional arguments ([`Script::call`]).
pub enum Positional {}

/// A script's long argument list as one type: `push` writes its KEYS and ARGV in the
/// order of the script's header, once. The counts are still checked before sending.
pub trait ScriptArgs {
    fn push(&self, to: &mut Args);
}

/// Names a [`ScriptArgs`] type whatever its lifetimes: a `static` can only name its
/// `'static` form, and `run` takes `At<'a>` for any `'a`. An argument type without borrows
/// implements it with `type At<'a> = Self;`.
pub trait ArgsOf {
    type At<'a>: ScriptArgs;
}

/// One registered script, replying `R`, with arguments `A` (an [`ArgsOf`] type, or
/// [`Positional`] for `call(..).key(..).arg(..)`). Declare it as a `static`.
pub struct Script<R, A = Positional> {
    decl: Decl,
    /// A crate's own Lua helpers (local functions), between the prelude and the script.
    helpers: Option<LuaFile>,
    /// A group script's one-call body ([`Script::group_of`]).
    inner: Option<LuaFile>,
    /// Runs while Redis is at `maxmemory` under `noeviction` ([`Script::allowing_oom`]).
    allow_oom: bool,
    compiled: OnceLock<redis::Script>,
    /// [`Script::source`], made once.
    text: OnceLock<String>,
    types: PhantomData<fn(&A) -> R>,
}

impl<R, A> Script<R, A> {
    pub const fn new(decl: Decl) -> Self {
        Script {
            decl,
            helpers: None,
            inner: None,
            allow_oom: false,
            compiled: OnceLock::new(),
            text: OnceLock::new(),
            types: PhantomData,
        }
    }

    /// With a crate's own Lua helpers (a file of local functions shared by its scripts).
    pub const fn with_helpers(decl: Decl, helpers: LuaFile) -> Self {
        Script {
            decl,
            helpers: Some(helpers),
            inner: None,
            allow_oom: false,
            compiled: OnceLock::new(),
            text: OnceLock::new(),
            types: PhantomData,
        }
    }

    /// A group script: several calls of `inner` (another registered script's file) in one
    /// `EVALSHA`, so the per-call cost (the dispatch, the prelude and helpers made, the
    /// clock, the replicas' `WAIT`) is paid once per group. `inner`'s text becomes the
    /// function `one(keys, argv)`, which `decl`'s file runs once per call with the prelude's
    /// `run_group(one, keys, argv)`, KEYS and ARGV holding that call's slice meanwhile: the
    /// call's KEYS and ARGV are each call's in turn, `decl.keys` and `decl.argv` of them a
    /// call (so `decl.argv` must be [`Argv::Exactly`]); the reply is the calls' replies, in
    /// order, `{'error', message}` for one that raised an error.
    pub const fn group_of(decl: Decl, helpers: LuaFile, inner: LuaFile) -> Self {
        Script {
            decl,
            helpers: Some(helpers),
            inner: Some(inner),
            allow_oom: false,
            compiled: OnceLock::new(),
            text: OnceLock::new(),
            types: PhantomData,
        }
    }

    /// Runs even while Redis is out of memory (`#!lua flags=allow-oom`): for a script that
    /// moves admitted work to its end (a completion, a lease) and writes a few fields, most
    /// of which free memory. Without it Redis refuses the script at its first write that may
    /// grow memory. Not for a read-only script (those run anyway).
    pub const fn allowing_oom(mut self) -> Self {
        self.allow_oom = true;
        self
    }

    pub fn name(&self) -> &'static str {
        self.decl.file.name()
    }

    /// The text sent to Redis: flags, prelude, helpers (of both, what the script uses), script.
    pub fn source(&self) -> String {
        let flags = match (self.decl.writes, self.allow_oom) {
            (Writes::ReadOnly, _) => "#!lua flags=no-writes\n",
            (Writes::PrimaryOnly | Writes::Durable, true) => "#!lua flags=allow-oom\n",
            (Writes::PrimaryOnly | Writes::Durable, false) => "",
        };
        let helpers = self.helpers.map(|h| h.text).unwrap_or("");
        // A group script: the inner script's text as the function its loop calls, with the
        // call's KEYS and ARGV, which it makes the locals KEYS and ARGV that the helpers (after
        // them) read too. Copying them into Redis's own tables instead (its globals are
        // read-only) cost more instructions per call than the group saved.
        let (between, body) = match self.inner {
            Some(inner) => (
                "local KEYS, ARGV = KEYS, ARGV\n",
                format!(
                    "local function one(k, a)\nKEYS, ARGV = k, a\n{}\nend\n{}",
                    inner.text, self.decl.file.text
                ),
            ),
            None => ("", self.decl.file.text.to_string()),
        };
        // Only the prelude's and helpers' definitions the script uses (crate::lua_shake):
        // Redis makes every closure of the text again on each call.
        let lib =
            crate::lua_shake::shake(&format!("{}\n{between}{helpers}\n", PRELUDE.text), &body);
        format!("{flags}{lib}{body}")
    }

    /// The SHA1 Redis knows the script by (EVALSHA).
    pub fn sha(&self) -> &str {
        self.compiled().get_hash()
    }

    fn source_text(&self) -> &str {
        self.text.get_or_init(|| self.source())
    }

    fn compiled(&self) -> &redis::Script {
        self.compiled
            .get_or_init(|| redis::Script::new(self.source_text()))
    }

    fn start<'a>(&'a self, store: &'a Store) -> Call<'a, R> {
        Call {
            decl: &self.decl,
            group: self.inner.is_some(),
            compiled: self.compiled(),
            source: self.source_text(),
            store,
            args: Args::default(),
            reply: PhantomData,
        }
    }
}

impl<R> Script<R, Positional> {
    /// An invocation on `store`: add its KEYS and ARGV in the header's order, then `run`.
    pub fn call<'a>(&'a self, store: &'a Store) -> Call<'a, R> {
        self.start(store)
    }

    /// An invocation with the KEYS and ARGV given, made beforehand (a group's are the
    /// calls' one after another, [`Args::append`]).
    pub fn call_with<'a>(&'a self, store: &'a Store, args: Args) -> Call<'a, R> {
        let mut call = self.start(store);
        call.args = args;
        call
    }
}

impl<R: FromRedisValue, A: ArgsOf> Script<R, A> {
    /// Runs the script with `args` (see [`Call::run`]). The arguments are copied out before
    /// the future starts, so it borrows nothing of them.
    pub fn run<'s>(
        &'s self,
        store: &'s Store,
        args: &A::At<'_>,
    ) -> impl Future<Output = redis::RedisResult<R>> + Send + 's
    where
        R: Send + 's,
    {
        let mut call = self.start(store);
        args.push(&mut call.args);
        call.run()
    }
}

/// What the tidy test and tools need to know of a registered script, whatever its types.
pub trait Registered: Sync {
    fn decl(&self) -> &Decl;
    fn helpers(&self) -> Option<&LuaFile>;
}

impl<R, A> Registered for Script<R, A> {
    fn decl(&self) -> &Decl {
        &self.decl
    }

    fn helpers(&self) -> Option<&LuaFile> {
        self.helpers.as_ref()
    }
}

/// KEYS and ARGV being collected for one invocation, each list in one buffer (a `Cmd` is a
/// byte buffer with the ends of its arguments): the session save sends 20 to 40 arguments,
/// and a buffer per argument, copied again into redis-rs's invocation and then into its
/// command, was about 150 allocations of an action cycle.
#[derive(Default, Clone)]
pub struct Args {
    keys: Cmd,
    argv: Cmd,
}

impl Args {
    /// Adds KEYS entries (one for a string; a list adds each of its items).
    pub fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        key.write_redis_args(&mut self.keys);
        self
    }

    /// Adds ARGV entries (one for a string or number; a list adds each of its items).
    pub fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        arg.write_redis_args(&mut self.argv);
        self
    }

    /// Adds `other`'s KEYS and ARGV after these (one call of a group, [`Script::group_of`]).
    pub fn append(&mut self, other: &Args) -> &mut Self {
        for key in other.keys() {
            self.keys.arg(key);
        }
        for arg in other.argv() {
            self.argv.arg(arg);
        }
        self
    }

    fn keys(&self) -> impl Iterator<Item = &[u8]> {
        each_arg(&self.keys)
    }

    fn argv(&self) -> impl Iterator<Item = &[u8]> {
        each_arg(&self.argv)
    }
}

/// The arguments written to `c` (`ToRedisArgs` writes plain ones only: a cursor is a
/// command's own, never a value's).
fn each_arg(c: &Cmd) -> impl Iterator<Item = &[u8]> {
    c.args_iter().filter_map(|a| match a {
        redis::Arg::Simple(bytes) => Some(bytes),
        _ => None,
    })
}

/// One invocation of a script on a store.
pub struct Call<'a, R> {
    decl: &'a Decl,
    group: bool,
    compiled: &'a redis::Script,
    /// The text `compiled` hashes: sent as EVAL when a node does not know the script.
    source: &'a str,
    store: &'a Store,
    args: Args,
    reply: PhantomData<fn() -> R>,
}

impl<'a, R: FromRedisValue> Call<'a, R> {
    pub fn key<T: ToRedisArgs>(&mut self, key: T) -> &mut Self {
        self.args.key(key);
        self
    }

    pub fn arg<T: ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        self.args.arg(arg);
        self
    }

    /// Checks the counts, runs the script (EVALSHA; EVAL with the source on NOSCRIPT) and, for a
    /// durable one, waits for the replicas on the same connection. The invocation is built
    /// before the future starts: the future borrows nothing of this call.
    pub fn run(&self) -> impl Future<Output = redis::RedisResult<R>> + Send + 'a
    where
        R: Send + 'a,
    {
        self.run_as(false)
    }

    /// [`Call::run`] sent with the script's source at once (EVAL): one message whatever the
    /// server's script cache holds, for a call that must reach Redis even when no answer
    /// comes back (a one-way partition: the NOSCRIPT answer that asks for the source would
    /// never arrive). Costs the source's bytes on the wire; only for calls after a failure.
    pub fn run_whole(&self) -> impl Future<Output = redis::RedisResult<R>> + Send + 'a
    where
        R: Send + 'a,
    {
        self.run_as(true)
    }

    fn run_as(&self, whole: bool) -> impl Future<Output = redis::RedisResult<R>> + Send + 'a
    where
        R: Send + 'a,
    {
        let (nkeys, nargv) = (self.args.keys().count(), self.args.argv().count());
        let checked = check_counts(self.decl, self.group, nkeys, nargv).and_then(|()| {
            match self.store.hash_tags() {
                true => check_slots(self.decl, self.args.keys()),
                false => Ok(()),
            }
        });
        let durable = self.decl.writes == Writes::Durable;
        // Only a durable script's caller waits for the replicas of its first key's shard (a
        // script of no keys: the primary's).
        let first_key = durable.then(|| {
            self.args
                .keys()
                .next()
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        });
        // EVALSHA sha numkeys KEYS... ARGV... clock-offset, in one buffer.
        let offset = self.store.clock_offset_ms();
        let bytes: usize = self
            .args
            .keys()
            .chain(self.args.argv())
            .map(<[u8]>::len)
            .sum();
        let mut eval = Cmd::with_capacity(4 + nkeys + nargv, bytes + 96);
        eval.arg("EVALSHA").arg(self.compiled.get_hash()).arg(nkeys);
        for key in self.args.keys() {
            eval.arg(key);
        }
        for arg in self.args.argv() {
            eval.arg(arg);
        }
        eval.arg(offset);
        let (store, source) = (self.store, self.source);
        if whole {
            eval = with_source(&eval, source);
        }
        async move {
            checked?;
            // A durable script and its WAIT on a connection of their own (`Store::durable`).
            let mut conn = match first_key {
                Some(_) => store.durable().await?,
                None => crate::DurableConn::shared(store.conn()),
            };
            let reply = match eval.query_async(&mut conn).await {
                // A restarted or failed-over Redis does not know the script yet (a replica
                // never gets its primary's scripts): send it with its source (EVAL), which
                // also caches it there. EVAL is routed by its KEYS like EVALSHA, to the one
                // node that refused; `SCRIPT LOAD` goes to every primary of a cluster and
                // fails while any of them is down, so one shard that was down failed every
                // script whose node had forgotten it, on every shard.
                Err(e)
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
                {
                    with_source(&eval, source).query_async(&mut conn).await?
                }
                other => other?,
            };
            if let Some(first_key) = first_key {
                store.settle_at(&mut conn, &first_key).await?;
            }
            Ok(reply)
        }
    }
}

/// `EVALSHA sha numkeys KEYS.. ARGV..` as `EVAL source numkeys KEYS.. ARGV..`.
fn with_source(evalsha: &Cmd, source: &str) -> Cmd {
    let mut eval = redis::cmd("EVAL");
    eval.arg(source);
    for arg in evalsha.args_iter().skip(2) {
        if let redis::Arg::Simple(bytes) = arg {
            eval.arg(bytes);
        }
    }
    eval
}

/// A count that differs from the declaration is a bug in the caller: refused before sending.
fn check_counts(decl: &Decl, group: bool, keys: usize, argv: usize) -> redis::RedisResult<()> {
    if !group && keys == decl.keys && decl.argv.admits(argv) {
        return Ok(());
    }
    // A group: one or more calls, each with the declared counts.
    let calls = keys.checked_div(decl.keys).unwrap_or(0);
    if group
        && calls > 0
        && keys == calls * decl.keys
        && matches!(decl.argv, Argv::Exactly(n) if argv == calls * n)
    {
        return Ok(());
    }
    let declared_argv = match decl.argv {
        Argv::Exactly(n) => n.to_string(),
        Argv::AtLeast(n) => format!("at least {n}"),
    };
    Err(redis::RedisError::from((
        redis::ErrorKind::Client,
        "a script was called with the wrong number of KEYS or ARGV; nothing was sent",
        format!(
            "script {}: called with {keys} KEYS and {argv} ARGV, declared {} KEYS and {declared_argv} ARGV ({})",
            decl.file.name(),
            decl.keys,
            decl.file.path,
        ),
    )))
}

/// Every KEY of one invocation must be in one hash slot: Redis Cluster refuses a script
/// whose keys are not (`CROSSSLOT`), and so would a cluster this runs on later. Checked on
/// every call on a cluster; a mismatch is a bug in a
/// key module, refused before sending with the keys named. (On one server the names carry
/// no tags and nothing is checked.)
fn check_slots<'k>(
    decl: &Decl,
    mut keys: impl Iterator<Item = &'k [u8]>,
) -> redis::RedisResult<()> {
    let Some(first) = keys.next() else {
        return Ok(());
    };
    let slot = crate::cluster::slot(first);
    let Some(other) = keys.find(|k| crate::cluster::slot(k) != slot) else {
        return Ok(());
    };
    Err(redis::RedisError::from((
        redis::ErrorKind::Client,
        "a script was called with keys in different hash slots; nothing was sent",
        format!(
            "script {}: {} is in slot {slot}, {} in slot {}; give them one hash tag in the crate's key module ({})",
            decl.file.name(),
            String::from_utf8_lossy(first),
            String::from_utf8_lossy(other),
            crate::cluster::slot(other),
            decl.file.path,
        ),
    )))
}

/// The scripts of this crate, for the tidy test.
pub fn registered() -> Vec<&'static dyn Registered> {
    vec![
        &crate::delayed::POP_DUE,
        &crate::delayed::ACK_DUE,
        &crate::trail::TRAIL_PUSH,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DECL: Decl = Decl {
        file: crate::lua!("lua/pop_due.lua"),
        keys: 1,
        argv: Argv::Exactly(2),
        writes: Writes::PrimaryOnly,
    };

    #[test]
    fn counts_are_checked_and_the_error_names_the_script() {
        assert!(check_counts(&DECL, false, 1, 2).is_ok());
        let e = check_counts(&DECL, false, 1, 1).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("script pop_due"), "{text}");
        assert!(
            text.contains("1 ARGV, declared 1 KEYS and 2 ARGV"),
            "{text}"
        );
        assert!(
            !crate::is_unreachable(&e),
            "a wrong count is a bug, not an outage"
        );
        assert!(check_counts(&DECL, false, 2, 2).is_err());
        let open = Decl {
            argv: Argv::AtLeast(2),
            ..DECL
        };
        assert!(check_counts(&open, false, 1, 5).is_ok());
        assert!(check_counts(&open, false, 1, 1).is_err());
        // A group: whole calls only, with the counts of as many calls in both.
        assert!(check_counts(&DECL, true, 1, 2).is_ok());
        assert!(check_counts(&DECL, true, 3, 6).is_ok());
        assert!(check_counts(&DECL, true, 0, 0).is_err());
        assert!(check_counts(&DECL, true, 3, 4).is_err());
        assert!(check_counts(&DECL, true, 2, 6).is_err());
        assert!(
            check_counts(&open, true, 2, 4).is_err(),
            "a group's calls have exact counts"
        );
    }

    #[test]
    fn keys_in_two_slots_are_refused_naming_both() {
        let same: [&[u8]; 2] = [b"horst:{q}job:1", b"horst:{q}queue:running"];
        assert!(check_slots(&DECL, same.into_iter()).is_ok());
        assert!(check_slots(&DECL, std::iter::empty()).is_ok());
        let apart: [&[u8]; 2] = [b"horst:{q}job:1", b"horst:{g}rev:1"];
        let text = check_slots(&DECL, apart.into_iter())
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("script pop_due") && text.contains("horst:{g}rev:1"),
            "{text}"
        );
    }

    #[test]
    fn read_only_scripts_carry_the_no_writes_flag_first() {
        let ro: Script<()> = Script::new(Decl {
            writes: Writes::ReadOnly,
            ..DECL
        });
        assert!(ro.source().starts_with("#!lua flags=no-writes\n"));
        let rw: Script<()> = Script::new(DECL);
        // The prelude first (of its definitions, those the script uses: lua_shake), with
        // its one effect, taking the clock offset off ARGV.
        let prelude_head = &PRELUDE.text[..PRELUDE.text.find("local ").unwrap()];
        assert!(rw.source().starts_with(prelude_head));
        assert!(rw.source().contains("table.remove(ARGV)"));
        let oom: Script<()> = Script::new(DECL).allowing_oom();
        assert!(oom.source().starts_with("#!lua flags=allow-oom\n"));
        assert!(rw.source().ends_with(DECL.file.text));
        assert_eq!(rw.name(), "pop_due");
    }
}
