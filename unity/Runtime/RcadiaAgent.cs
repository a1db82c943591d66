using System;
using System.Collections.Generic;

namespace Rcadia.Agent
{
    /// <summary>
    /// RCADIA agent SDK v2 for Unity games: the C# twin of the JS SDK
    /// (web/sdk/rcadia-agent.js), implementing section 2 of the RCADIA Agent Protocol v2.
    ///
    /// The game is authoritative for rules; it talks to its host only through messages of
    /// shape <c>{ type, data }</c>. Actions, states, observations and results are the game's
    /// own JSON and pass through unchanged as JSON text.
    ///
    /// One handler per kind: registering again replaces the previous one, and each
    /// <c>On...</c> method returns the agent so calls chain. Handlers run inside
    /// <see cref="Receive"/>; an exception a handler throws comes out of it. The agent is not
    /// thread-safe: use it from one thread (Unity's main thread).
    /// </summary>
    public sealed class RcadiaAgent : IDisposable
    {
        /// <summary>The SDK version this implements, sent as AGENT_CONFIGURE's sdkVersion.</summary>
        public const string Version = "2.0.0";

        // The platform reserves playerId "__system__" for its own v1-style messages.
        const string SystemPlayer = "__system__";

        // Remember this many delivered actionIds. A host re-delivers an entry only around a
        // reconnect, so a bounded window is enough and a long series of games cannot grow
        // memory without limit. The same number as the JS SDK, so both drop the same repeats.
        const int SeenActionIdsLimit = 2048;

        static readonly JsonValue EmptyObject = Json.Parse("{}");

        /// <summary>
        /// Makes the link <c>new RcadiaAgent(config)</c> uses. The package's Unity glue sets it
        /// when the game loads (the WebGL bridge); elsewhere pass a link to the constructor.
        /// </summary>
        public static Func<IHostLink> DefaultHostLink { get; set; }

        readonly IHostLink link;
        readonly string configureJson;
        readonly HashSet<string> seenActionIds = new HashSet<string>(StringComparer.Ordinal);
        readonly Queue<string> seenOrder = new Queue<string>();
        // Last actionId delivered per player, for RejectAction.
        readonly Dictionary<string, string> lastActionId = new Dictionary<string, string>(StringComparer.Ordinal);

        Action<GameStartInfo> gameStartHandler;
        ActionHandler actionHandler;
        Action<string, TimeoutInfo> timeoutHandler;
        Action<SessionEndInfo> sessionEndHandler;
        Action<string, string> actionRejectedHandler;

        string[] players = new string[0];
        Dictionary<string, string> playerNames = new Dictionary<string, string>(StringComparer.Ordinal);
        bool disposed;

        /// <summary>
        /// Connects to the host through <see cref="DefaultHostLink"/> and sends AGENT_CONFIGURE.
        /// </summary>
        /// <exception cref="InvalidOperationException">No default link is set (outside Unity, or before the glue loaded).</exception>
        /// <exception cref="ArgumentException">The server would refuse the config: MinPlayers outside 1-64, MaxPlayers below MinPlayers or above 64, TurnTimeout negative, NaN, infinite or over 365 days, MaxTurnTimeouts negative.</exception>
        public RcadiaAgent(AgentConfig config = null)
            : this(Checked(config), DefaultLink()) // checked first: a bad config makes no link
        {
        }

        /// <summary>Connects to the host through <paramref name="link"/> and sends AGENT_CONFIGURE.</summary>
        /// <exception cref="ArgumentNullException">link is null.</exception>
        /// <exception cref="ArgumentException">The server would refuse the config: MinPlayers outside 1-64, MaxPlayers below MinPlayers or above 64, TurnTimeout negative, NaN, infinite or over 365 days, MaxTurnTimeouts negative.</exception>
        public RcadiaAgent(AgentConfig config, IHostLink link)
        {
            if (link == null) throw new ArgumentNullException("link", "RcadiaAgent needs a host link: pass an IHostLink, or use new RcadiaAgent(config) in Unity");
            configureJson = BuildConfigure(Checked(config));
            this.link = link;
            link.Open(Receive);
            Post("AGENT_CONFIGURE", configureJson);
        }

        static IHostLink DefaultLink()
        {
            var factory = DefaultHostLink;
            IHostLink link = factory != null ? factory() : null;
            if (link == null)
                throw new InvalidOperationException("RcadiaAgent needs a host link: in Unity the package's glue provides one (RcadiaWebGLLink); elsewhere pass an IHostLink to new RcadiaAgent(config, link)");
            return link;
        }

        // ---- state the host announced ----

        /// <summary>Id of the current session, from AGENT_SESSION_START / AGENT_GAME_START; null until then.</summary>
        public string SessionId { get; private set; }

        /// <summary>playerIds in seat order (a copy).</summary>
        public string[] Players { get { return (string[])players.Clone(); } }

        /// <summary>1-based round of the series; 0 until the host names one.</summary>
        public int Round { get; private set; }

        /// <summary>
        /// Players' display names by playerId, when the host sends them (<c>names</c> with
        /// AGENT_SESSION_START / AGENT_GAME_START, as the house host does); empty otherwise. A copy.
        /// </summary>
        public Dictionary<string, string> PlayerNames { get { return new Dictionary<string, string>(playerNames, StringComparer.Ordinal); } }

        /// <summary>
        /// True once the host has shown it holds this game's configuration: it has sent any host
        /// message other than AGENT_REQUEST_CONFIGURE (a host only creates a session and speaks
        /// after it received AGENT_CONFIGURE). AGENT_REQUEST_CONFIGURE sets it back to false,
        /// because the host asks exactly when it lost (or never had) the configuration.
        /// </summary>
        public bool IsConfigured { get; private set; }

        // ---- handlers ----

        /// <summary>Every seat is filled: reset and start the game.</summary>
        public RcadiaAgent OnGameStart(Action<GameStartInfo> handler)
        {
            gameStartHandler = handler;
            return this;
        }

        /// <summary>One player's action.</summary>
        public RcadiaAgent OnAction(ActionHandler handler)
        {
            actionHandler = handler;
            return this;
        }

        /// <summary>The player on turn ran out of time.</summary>
        public RcadiaAgent OnTimeout(Action<string, TimeoutInfo> handler)
        {
            timeoutHandler = handler;
            return this;
        }

        /// <summary>The platform ended the game; show the result and wait for the next game start.</summary>
        public RcadiaAgent OnSessionEnd(Action<SessionEndInfo> handler)
        {
            sessionEndHandler = handler;
            return this;
        }

        /// <summary>Kept for v1 compatibility (playerId, reason); the platform never sends it.</summary>
        public RcadiaAgent OnActionRejected(Action<string, string> handler)
        {
            actionRejectedHandler = handler;
            return this;
        }

        // ---- outbound ----

        /// <summary>Publish the public, authoritative state (spectators see it).</summary>
        /// <exception cref="ArgumentException">stateJson is not JSON (null means JSON null).</exception>
        public void SetState(string stateJson)
        {
            var w = new JsonWriter().BeginObject();
            w.Name("state");
            WriteJsonArgument(w, stateJson, "stateJson");
            PostData("AGENT_STATE", w.EndObject());
        }

        /// <summary>Publish the public state.</summary>
        public void SetState(JsonValue state)
        {
            SetState(state == null ? null : state.ToJson());
        }

        /// <summary>Publish one player's private view (hidden information).</summary>
        /// <exception cref="ArgumentNullException">playerId is null.</exception>
        /// <exception cref="ArgumentException">observationJson is not JSON (null means JSON null).</exception>
        public void SetObservation(string playerId, string observationJson)
        {
            RequireNotNull(playerId, "playerId");
            var w = new JsonWriter().BeginObject();
            w.Name("playerId").String(playerId);
            w.Name("observation");
            WriteJsonArgument(w, observationJson, "observationJson");
            PostData("AGENT_OBSERVATION", w.EndObject());
        }

        /// <summary>Publish one player's private view.</summary>
        public void SetObservation(string playerId, JsonValue observation)
        {
            SetObservation(playerId, observation == null ? null : observation.ToJson());
        }

        /// <summary>
        /// Publish what that player may do now; each entry is one submittable action's JSON text.
        /// An empty list means the player may do nothing.
        /// </summary>
        /// <exception cref="ArgumentNullException">playerId or actionsJson is null.</exception>
        /// <exception cref="ArgumentException">An entry is not JSON (a null entry means JSON null).</exception>
        public void SetLegalActions(string playerId, IEnumerable<string> actionsJson)
        {
            RequireNotNull(playerId, "playerId");
            RequireNotNull(actionsJson, "actionsJson");
            var w = new JsonWriter().BeginObject();
            w.Name("playerId").String(playerId);
            w.Name("actions").BeginArray();
            foreach (var action in actionsJson) WriteJsonArgument(w, action, "actionsJson");
            w.EndArray();
            PostData("AGENT_LEGAL_ACTIONS", w.EndObject());
        }

        /// <summary>Publish what that player may do now, as a JSON array.</summary>
        /// <exception cref="ArgumentException">actions is not an array.</exception>
        public void SetLegalActions(string playerId, JsonValue actions)
        {
            RequireNotNull(actions, "actions");
            if (actions.Kind != JsonKind.Array) throw new ArgumentException("legal actions must be a JSON array", "actions");
            var texts = new List<string>(actions.Count);
            foreach (var a in actions.Items) texts.Add(a.ToJson());
            SetLegalActions(playerId, texts);
        }

        /// <summary>
        /// Reject the player's last action. The actionId of the last action delivered to that
        /// player is attached so the platform can tell which action failed.
        /// </summary>
        /// <exception cref="ArgumentNullException">playerId or reason is null.</exception>
        public void RejectAction(string playerId, string reason)
        {
            RequireNotNull(playerId, "playerId");
            RequireNotNull(reason, "reason");
            var w = new JsonWriter().BeginObject();
            w.Name("playerId").String(playerId);
            w.Name("reason").String(reason);
            string actionId;
            if (lastActionId.TryGetValue(playerId, out actionId)) w.Name("actionId").String(actionId);
            PostData("AGENT_ACTION_REJECTED", w.EndObject());
        }

        /// <summary>End the game. The result's <c>winner</c> should be a playerId or null (a draw).</summary>
        /// <exception cref="ArgumentException">resultJson is not JSON (null means JSON null), or
        /// not an object or null: the server refuses the end of any other result, so the game
        /// would never end on the platform.</exception>
        public void EndGame(string resultJson)
        {
            JsonValue parsed;
            if (resultJson != null && Json.TryParse(resultJson, out parsed) && parsed != null
                && parsed.Kind != JsonKind.Object && parsed.Kind != JsonKind.Null)
            {
                throw new ArgumentException("resultJson must be a JSON object such as {\"winner\":\"p_1\"} or {\"winner\":null} (a draw), or null; got " + parsed.Kind, "resultJson");
            }
            var w = new JsonWriter().BeginObject();
            w.Name("result");
            WriteJsonArgument(w, resultJson, "resultJson");
            PostData("AGENT_GAME_OVER", w.EndObject());
        }

        /// <summary>End the game.</summary>
        public void EndGame(JsonValue result)
        {
            EndGame(result == null ? null : result.ToJson());
        }

        /// <summary>Ask for another round with the same players (only needed without AutoRematch).</summary>
        public void Rematch()
        {
            Post("AGENT_REMATCH", "{}");
        }

        /// <summary>Stop listening to the host (the agent can still send).</summary>
        public void Dispose()
        {
            if (disposed) return;
            disposed = true;
            link.Close();
        }

        // ---- inbound ----

        /// <summary>
        /// One message from the host, as JSON text; the link calls this. Text that is not a
        /// <c>{ type, data }</c> message of the host's is ignored; nothing here throws on bad
        /// input (only the game's own handlers can throw).
        /// </summary>
        public void Receive(string messageJson)
        {
            if (disposed || messageJson == null) return;
            JsonValue msg;
            if (!Json.TryParse(messageJson, out msg) || msg.Kind != JsonKind.Object) return;
            string type = StringOrNull(msg["type"]);
            if (type == null) return;
            JsonValue data = msg["data"];
            if (data == null || data.Kind != JsonKind.Object) data = EmptyObject;

            if (type == "AGENT_REQUEST_CONFIGURE")
            {
                IsConfigured = false;
                Post("AGENT_CONFIGURE", configureJson);
                return;
            }
            switch (type)
            {
                case "AGENT_SESSION_START":
                    IsConfigured = true;
                    AdoptSession(data);
                    break;
                case "AGENT_GAME_START":
                    IsConfigured = true;
                    AdoptSession(data);
                    if (gameStartHandler != null) gameStartHandler(new GameStartInfo(SessionId, Players, Round, PlayerNames));
                    break;
                case "AGENT_ACTION":
                    IsConfigured = true;
                    DeliverAction(data);
                    break;
                case "AGENT_TIMEOUT":
                    {
                        IsConfigured = true;
                        int strike;
                        if (!IntOrNull(data["strike"], out strike)) strike = 1;
                        int maxStrikes;
                        bool hasMax = IntOrNull(data["maxStrikes"], out maxStrikes);
                        JsonValue final = data["final"];
                        var info = new TimeoutInfo(strike, hasMax ? maxStrikes : (int?)null, final != null && final.AsBoolean == true);
                        if (timeoutHandler != null) timeoutHandler(StringOrNull(data["playerId"]), info);
                        break;
                    }
                case "AGENT_SESSION_END":
                    {
                        IsConfigured = true;
                        var info = new SessionEndInfo(
                            StringOrNull(data["sessionId"]) ?? SessionId,
                            JsonOrNull(data["result"]),
                            StringOrNull(data["reason"]));
                        if (sessionEndHandler != null) sessionEndHandler(info);
                        break;
                    }
                case "AGENT_ACTION_REJECTED":
                    IsConfigured = true;
                    if (actionRejectedHandler != null) actionRejectedHandler(StringOrNull(data["playerId"]), StringOrNull(data["reason"]));
                    break;
                default:
                    return; // our own echoes when not framed, or unknown types
            }
        }

        void AdoptSession(JsonValue data)
        {
            string sessionId = StringOrNull(data["sessionId"]);
            if (sessionId != null) SessionId = sessionId;
            string[] list = StringArrayOrNull(data["players"]);
            if (list != null) players = list;
            int round;
            if (IntOrNull(data["round"], out round)) Round = round;
            JsonValue names = data["names"];
            if (names != null && names.Kind == JsonKind.Object)
            {
                // Only non-empty strings: a name is shown to people, never trusted for more.
                playerNames = new Dictionary<string, string>(StringComparer.Ordinal);
                foreach (var member in names.Members)
                {
                    string name = StringOrNull(member.Value);
                    if (!string.IsNullOrEmpty(name)) playerNames[member.Key] = name;
                }
            }
        }

        void DeliverAction(JsonValue data)
        {
            string playerId = StringOrNull(data["playerId"]);
            JsonValue action = data["action"];
            string actionId = StringOrNull(data["actionId"]);
            if (actionId != null)
            {
                // Hosts re-deliver after reconnects; a game must see each action once.
                if (seenActionIds.Contains(actionId)) return;
                RememberActionId(actionId);
                if (playerId != null) lastActionId[playerId] = actionId;
            }

            // v1 compatibility: v1 hosts delivered platform events as actions.
            if (action != null && action.Kind == JsonKind.Object)
            {
                string actionType = StringOrNull(action["type"]);
                if (playerId == SystemPlayer && actionType == "__game_start__")
                {
                    string[] list = StringArrayOrNull(action["players"]);
                    if (list != null) players = list;
                    if (Round == 0) Round = 1; // v1 has no rounds; a v1 session is round 1
                    if (gameStartHandler != null)
                    {
                        gameStartHandler(new GameStartInfo(SessionId, Players, Round, PlayerNames));
                        return;
                    }
                }
                else if (actionType == "__timeout__")
                {
                    if (timeoutHandler != null) timeoutHandler(playerId, new TimeoutInfo(1, null, false));
                    return;
                }
            }
            if (actionHandler != null) actionHandler(playerId, action == null ? null : action.ToJson(), actionId);
        }

        void RememberActionId(string actionId)
        {
            seenActionIds.Add(actionId);
            seenOrder.Enqueue(actionId);
            if (seenOrder.Count > SeenActionIdsLimit) seenActionIds.Remove(seenOrder.Dequeue());
        }

        // ---- helpers ----

        void Post(string type, string dataJson)
        {
            // {"type":...,"data":...} with data spliced in: it is our own valid JSON.
            link.Post("{\"type\":" + Json.Quote(type) + ",\"data\":" + dataJson + "}");
        }

        void PostData(string type, JsonWriter data)
        {
            Post(type, data.ToString());
        }

        static void WriteJsonArgument(JsonWriter w, string json, string argument)
        {
            if (json == null)
            {
                w.Null();
                return;
            }
            string problem = Json.Validate(json);
            if (problem != null) throw new ArgumentException(argument + " must be JSON text (" + problem + ")", argument);
            int start = 0;
            int end = json.Length;
            while (start < end && IsJsonWhitespace(json[start])) start++;
            while (end > start && IsJsonWhitespace(json[end - 1])) end--;
            w.RawValidated(json, start, end - start);
        }

        static bool IsJsonWhitespace(char c)
        {
            return c == ' ' || c == '\t' || c == '\n' || c == '\r';
        }

        static void RequireNotNull(object value, string argument)
        {
            if (value == null) throw new ArgumentNullException(argument);
        }

        static string StringOrNull(JsonValue v)
        {
            return v == null ? null : v.AsString;
        }

        static string JsonOrNull(JsonValue v)
        {
            return v == null || v.IsNull ? null : v.ToJson();
        }

        static bool IntOrNull(JsonValue v, out int value)
        {
            value = 0;
            return v != null && v.TryGetInt32(out value);
        }

        // The array when every entry is a string, else null (ignored, like a missing field).
        static string[] StringArrayOrNull(JsonValue v)
        {
            if (v == null || v.Kind != JsonKind.Array) return null;
            var list = new string[v.Count];
            for (int i = 0; i < list.Length; i++)
            {
                list[i] = v[i].AsString;
                if (list[i] == null) return null;
            }
            return list;
        }

        // Most seats a table may have: the server's MAX_SEATS (sessions/src/config.rs).
        const int MaxSeats = 64;
        // Longest TurnTimeout in seconds (365 days): the server's MAX_TURN_TIMEOUT_SECONDS.
        const double MaxTurnTimeout = 365 * 24 * 3600;

        // The config (null: the defaults) when the server would accept it, else an
        // ArgumentException that says what to change. The server's own rules
        // (Rules::from_config in sessions/src/config.rs): a game configured against them
        // would learn it only when a host failed to open its table.
        static AgentConfig Checked(AgentConfig config)
        {
            if (config == null) return new AgentConfig();
            if (config.MinPlayers < 1 || config.MinPlayers > MaxSeats)
                throw new ArgumentException("AgentConfig.MinPlayers must be between 1 and " + MaxSeats + ", got " + config.MinPlayers, "config");
            if (config.MaxPlayers.HasValue && (config.MaxPlayers.Value < config.MinPlayers || config.MaxPlayers.Value > MaxSeats))
                throw new ArgumentException("AgentConfig.MaxPlayers must be between MinPlayers (" + config.MinPlayers + ") and " + MaxSeats
                    + ", or null for MinPlayers; got " + config.MaxPlayers.Value, "config");
            if (config.TurnTimeout.HasValue)
            {
                double t = config.TurnTimeout.Value;
                if (double.IsNaN(t) || double.IsInfinity(t) || t < 0 || t > MaxTurnTimeout)
                    throw new ArgumentException("AgentConfig.TurnTimeout is in seconds and must be a finite number from 0 to 31536000 (365 days) (0: no clock; null: the platform default); got "
                        + t.ToString("R", System.Globalization.CultureInfo.InvariantCulture), "config");
            }
            if (config.MaxTurnTimeouts.HasValue && config.MaxTurnTimeouts.Value < 0)
                throw new ArgumentException("AgentConfig.MaxTurnTimeouts must be 0 or more (null: the platform default), got " + config.MaxTurnTimeouts.Value, "config");
            return config;
        }

        static string BuildConfigure(AgentConfig config)
        {
            var w = new JsonWriter().BeginObject();
            w.Name("minPlayers").Integer(config.MinPlayers);
            w.Name("maxPlayers").Integer(config.MaxPlayers ?? config.MinPlayers);
            w.Name("turnBased").Boolean(config.TurnBased);
            w.Name("simultaneous").Boolean(config.Simultaneous);
            w.Name("gameType").String(config.GameType ?? "custom");
            w.Name("sdkVersion").String(Version);
            // Optional fields only when the game set them: omitted means "platform default".
            if (config.TurnTimeout.HasValue) w.Name("turnTimeout").Number(config.TurnTimeout.Value);
            if (config.MaxTurnTimeouts.HasValue) w.Name("maxTurnTimeouts").Integer(config.MaxTurnTimeouts.Value);
            if (config.ForfeitOnTimeout.HasValue) w.Name("forfeitOnTimeout").Boolean(config.ForfeitOnTimeout.Value);
            if (config.AutoRematch.HasValue) w.Name("autoRematch").Boolean(config.AutoRematch.Value);
            return w.EndObject().ToString();
        }
    }
}
