using System;
using System.Collections.Generic;
using System.IO;
using System.Text;
using Rcadia.Agent;

// The C# side of the conformance test (Tests/Node~/conformance.test.mjs). Node runs the
// real RcadiaBridge.jslib in a fake browser and talks to this program over stdin/stdout,
// one JSON object a line, standing in for the WebGL runtime between the jslib and C#:
//
//   in   {"new": config}  {"handlers": [kind...]}  {"recv": "<what SendMessage passed>"}
//        {"call": "setState", "args": [...]}  {"props": true}  {"destroy": true}
//   out  {"open": {"object","method"}}  {"post": "<text for RcadiaBridge_Post>"}  {"close": true}
//        {"event": {...}}  {"props": {...}}  {"error": "..."}   and {"done": true} after each input
//
// With the argument "json" it reads lines of UTF-16 code units in hex instead and answers
// each with {"ok": false} or {"ok": true, "text": "<its normalized JSON>"} (json-differential.test.mjs).
static class ConformanceDriver
{
    static TextWriter output;

    static int Main(string[] args)
    {
        var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false)) { AutoFlush = false, NewLine = "\n" };
        output = stdout;
        var input = new StreamReader(Console.OpenStandardInput(), new UTF8Encoding(false));
        if (args.Length == 1 && args[0] == "json") return JsonCorpus(input, stdout);
        if (args.Length != 0)
        {
            Console.Error.WriteLine("usage: ConformanceDriver.exe [json]");
            return 2;
        }
        var session = new Session();
        string line;
        while ((line = input.ReadLine()) != null)
        {
            if (line.Length == 0) continue;
            try
            {
                session.Step(Json.Parse(line));
            }
            catch (Exception e)
            {
                Write(JsonValue.NewObject().Set("error", JsonValue.FromString(e.GetType().Name + ": " + e.Message)));
            }
            Write(JsonValue.NewObject().Set("done", JsonValue.True));
            stdout.Flush();
        }
        stdout.Flush();
        return 0;
    }

    static void Write(JsonValue v)
    {
        output.WriteLine(v.ToJson());
    }

    static int JsonCorpus(TextReader input, TextWriter stdout)
    {
        string line;
        while ((line = input.ReadLine()) != null)
        {
            var sb = new StringBuilder(line.Length / 4);
            for (int i = 0; i + 4 <= line.Length; i += 4) sb.Append((char)Convert.ToInt32(line.Substring(i, 4), 16));
            JsonValue v;
            if (Json.TryParse(sb.ToString(), out v)) stdout.WriteLine("{\"ok\":true,\"text\":" + Json.Quote(v.ToNormalizedJson()) + "}");
            else stdout.WriteLine("{\"ok\":false}");
        }
        stdout.Flush();
        return 0;
    }

    /// <summary>Stands in for RcadiaWebGLLink: each call becomes a line for the Node side's jslib.</summary>
    sealed class PipeLink : IHostLink
    {
        static int created;
        readonly string objectName;
        public Action<string> Receive;

        public PipeLink()
        {
            created++;
            objectName = "RcadiaHostLink" + created;
        }

        public void Open(Action<string> onMessage)
        {
            Receive = onMessage;
            Write(JsonValue.NewObject().Set("open", JsonValue.NewObject()
                .Set("object", JsonValue.FromString(objectName))
                .Set("method", JsonValue.FromString("ReceiveFromHost"))));
        }

        public void Post(string messageJson)
        {
            Write(JsonValue.NewObject().Set("post", JsonValue.FromString(messageJson)));
        }

        public void Close()
        {
            Receive = null;
            Write(JsonValue.NewObject().Set("close", JsonValue.True));
        }
    }

    sealed class Session
    {
        RcadiaAgent agent;
        PipeLink link;

        public void Step(JsonValue step)
        {
            if (step["new"] != null)
            {
                if (agent != null) agent.Dispose();
                link = new PipeLink();
                agent = new RcadiaAgent(Config(step["new"]), link);
            }
            else if (step["handlers"] != null)
            {
                foreach (var kind in step["handlers"].Items) Register(kind.AsString);
            }
            else if (step["recv"] != null)
            {
                if (link.Receive != null) link.Receive(step["recv"].AsString);
            }
            else if (step["call"] != null)
            {
                Call(step["call"].AsString, step["args"]);
            }
            else if (step["props"] != null)
            {
                Write(JsonValue.NewObject().Set("props", JsonValue.NewObject()
                    .Set("sessionId", JsonValue.FromString(agent.SessionId))
                    .Set("players", Strings(agent.Players))
                    .Set("round", JsonValue.FromInteger(agent.Round))
                    .Set("isConfigured", JsonValue.FromBoolean(agent.IsConfigured))));
            }
            else if (step["destroy"] != null)
            {
                agent.Dispose();
            }
            else
            {
                throw new ArgumentException("unknown step " + step.ToJson());
            }
        }

        static AgentConfig Config(JsonValue c)
        {
            var config = new AgentConfig();
            int n;
            if (c["minPlayers"] != null && c["minPlayers"].TryGetInt32(out n)) config.MinPlayers = n;
            if (c["maxPlayers"] != null && c["maxPlayers"].TryGetInt32(out n)) config.MaxPlayers = n;
            if (c["turnBased"] != null) config.TurnBased = c["turnBased"].AsBoolean.Value;
            if (c["simultaneous"] != null) config.Simultaneous = c["simultaneous"].AsBoolean.Value;
            if (c["gameType"] != null) config.GameType = c["gameType"].AsString;
            if (c["turnTimeout"] != null) config.TurnTimeout = c["turnTimeout"].AsNumber;
            if (c["maxTurnTimeouts"] != null && c["maxTurnTimeouts"].TryGetInt32(out n)) config.MaxTurnTimeouts = n;
            if (c["forfeitOnTimeout"] != null) config.ForfeitOnTimeout = c["forfeitOnTimeout"].AsBoolean;
            if (c["autoRematch"] != null) config.AutoRematch = c["autoRematch"].AsBoolean;
            return config;
        }

        void Register(string kind)
        {
            switch (kind)
            {
                case "gameStart":
                    agent.OnGameStart(i => Emit(Event("gameStart")
                        .Set("sessionId", JsonValue.FromString(i.SessionId))
                        .Set("players", Strings(i.Players))
                        .Set("round", JsonValue.FromInteger(i.Round))));
                    break;
                case "action":
                    agent.OnAction((playerId, actionJson, actionId) =>
                    {
                        var e = Event("action").Set("playerId", JsonValue.FromString(playerId));
                        if (actionJson != null) e.Set("action", Json.Parse(actionJson));
                        Emit(e.Set("actionId", JsonValue.FromString(actionId)));
                    });
                    break;
                case "timeout":
                    agent.OnTimeout((playerId, i) => Emit(Event("timeout")
                        .Set("playerId", JsonValue.FromString(playerId))
                        .Set("strike", JsonValue.FromInteger(i.Strike))
                        .Set("maxStrikes", i.MaxStrikes.HasValue ? JsonValue.FromInteger(i.MaxStrikes.Value) : JsonValue.Null)
                        .Set("final", JsonValue.FromBoolean(i.Final))));
                    break;
                case "sessionEnd":
                    agent.OnSessionEnd(i => Emit(Event("sessionEnd")
                        .Set("sessionId", JsonValue.FromString(i.SessionId))
                        .Set("result", i.ResultJson == null ? JsonValue.Null : Json.Parse(i.ResultJson))
                        .Set("reason", JsonValue.FromString(i.Reason))));
                    break;
                case "actionRejected":
                    agent.OnActionRejected((playerId, reason) => Emit(Event("actionRejected")
                        .Set("playerId", JsonValue.FromString(playerId))
                        .Set("reason", JsonValue.FromString(reason))));
                    break;
                default:
                    throw new ArgumentException("unknown handler kind " + kind);
            }
        }

        static JsonValue Event(string kind)
        {
            return JsonValue.NewObject().Set("kind", JsonValue.FromString(kind));
        }

        static void Emit(JsonValue e)
        {
            Write(JsonValue.NewObject().Set("event", e));
        }

        void Call(string method, JsonValue args)
        {
            switch (method)
            {
                case "setState": agent.SetState(args[0].ToJson()); break;
                case "setObservation": agent.SetObservation(args[0].AsString, args[1].ToJson()); break;
                case "setLegalActions":
                    {
                        var actions = new List<string>();
                        foreach (var a in args[1].Items) actions.Add(a.ToJson());
                        agent.SetLegalActions(args[0].AsString, actions);
                        break;
                    }
                case "rejectAction": agent.RejectAction(args[0].AsString, args[1].AsString); break;
                case "endGame": agent.EndGame(args[0].ToJson()); break;
                case "rematch": agent.Rematch(); break;
                default: throw new ArgumentException("unknown call " + method);
            }
        }

        static JsonValue Strings(string[] list)
        {
            var a = JsonValue.NewArray();
            foreach (var s in list) a.Add(JsonValue.FromString(s));
            return a;
        }
    }
}
