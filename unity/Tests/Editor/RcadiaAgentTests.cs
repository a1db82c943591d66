using System;
using System.Collections.Generic;
using NUnit.Framework;

namespace Rcadia.Agent.Tests
{
    /// <summary>
    /// The same cases as the JS SDK's tests (web/test/sdk.test.js), in the same order, then
    /// the C#-only ones. Test JSON is written with single quotes (see FakeHostLink.Tick).
    /// </summary>
    [TestFixture]
    public class RcadiaAgentTests
    {
        sealed class Setup
        {
            public readonly FakeHostLink Link = new FakeHostLink();
            public readonly RcadiaAgent Agent;

            public Setup(AgentConfig config)
            {
                Agent = new RcadiaAgent(config, Link);
            }
        }

        static Setup Make(AgentConfig config = null)
        {
            return new Setup(config ?? new AgentConfig { MinPlayers = 2, MaxPlayers = 2, GameType = "chess" });
        }

        static string T(string text)
        {
            return FakeHostLink.Tick(text);
        }

        [TearDown]
        public void ClearDefaultLink()
        {
            RcadiaAgent.DefaultHostLink = null;
        }

        [Test]
        public void VersionIs200()
        {
            Assert.AreEqual("2.0.0", RcadiaAgent.Version);
        }

        [Test]
        public void ConstructingWithoutAnyLinkThrowsAClearError()
        {
            RcadiaAgent.DefaultHostLink = null;
            var e = Assert.Throws<InvalidOperationException>(() => new RcadiaAgent(new AgentConfig()));
            StringAssert.Contains("needs a host link", e.Message);
            var n = Assert.Throws<ArgumentNullException>(() => new RcadiaAgent(new AgentConfig(), null));
            StringAssert.Contains("needs a host link", n.Message);
        }

        [Test]
        public void ConfigureIsSentOnConstructWithSdkVersionAndOnlyTheOptionalFieldsSet()
        {
            var s = Make(new AgentConfig { MinPlayers = 2, MaxPlayers = 4, TurnBased = false, Simultaneous = true, GameType = "rps", AutoRematch = true, TurnTimeout = 0 });
            Assert.AreEqual(1, s.Link.Sent.Count);
            // The same text, key for key, as the JS SDK writes.
            Assert.AreEqual(
                T("{'type':'AGENT_CONFIGURE','data':{'minPlayers':2,'maxPlayers':4,'turnBased':false,'simultaneous':true,'gameType':'rps','sdkVersion':'2.0.0','turnTimeout':0,'autoRematch':true}}"),
                s.Link.Sent[0]);
        }

        [Test]
        public void ConfigureDefaultsTwoPlayersTurnBasedSequentialNoOptionalFields()
        {
            var s = new Setup(new AgentConfig());
            Assert.AreEqual(
                new[] { "{'minPlayers':2,'maxPlayers':2,'turnBased':true,'simultaneous':false,'gameType':'custom','sdkVersion':'2.0.0'}" },
                s.Link.SentOfTypeText("AGENT_CONFIGURE").ToArray());
            var nullConfig = new Setup(null);
            Assert.AreEqual(s.Link.Sent, nullConfig.Link.Sent);
        }

        [Test]
        public void RequestConfigureResendsTheSameConfigureAndClearsIsConfigured()
        {
            var s = Make();
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':1,'players':[]}}");
            Assert.IsTrue(s.Agent.IsConfigured);
            s.Link.Dispatch("{'type':'AGENT_REQUEST_CONFIGURE','data':{}}");
            var configs = s.Link.SentOfTypeText("AGENT_CONFIGURE");
            Assert.AreEqual(2, configs.Count);
            Assert.AreEqual(configs[0], configs[1]);
            Assert.AreEqual(s.Link.Sent[0], s.Link.Sent[1]);
            Assert.IsFalse(s.Agent.IsConfigured);
        }

        // "messages whose source is not window.parent are ignored" is the link's job in C#:
        // see Tests/Node~/bridge.test.mjs. Here: a closed link delivers nothing.
        [Test]
        public void MessagesAfterDisposeAreIgnored()
        {
            var s = Make();
            var calls = new List<string>();
            s.Agent.OnAction((p, a, id) => calls.Add(p));
            s.Agent.Dispose();
            s.Agent.Receive(T("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':'x','actionId':'a_1'}}"));
            s.Agent.Receive(T("{'type':'AGENT_REQUEST_CONFIGURE','data':{}}"));
            CollectionAssert.IsEmpty(calls);
            Assert.IsFalse(s.Agent.IsConfigured);
            Assert.AreEqual(1, s.Link.SentOfType("AGENT_CONFIGURE").Count);
        }

        [Test]
        public void MalformedAndUnknownMessagesAreIgnored()
        {
            var s = Make();
            var calls = new List<string>();
            s.Agent.OnAction((p, a, id) => calls.Add(p));
            s.Link.DispatchRaw("null");
            s.Link.DispatchRaw("\"AGENT_ACTION\"");
            s.Link.Dispatch("{'type':42}");
            s.Link.Dispatch("{'type':'SOMETHING_ELSE','data':{}}");
            s.Link.Dispatch("{'type':'AGENT_CONFIGURE','data':{}}"); // our own echo when the page is not framed
            s.Link.Dispatch("['AGENT_ACTION']");
            s.Link.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_1\""); // cut short
            s.Link.DispatchRaw("not json at all");
            s.Link.DispatchRaw("");
            s.Agent.Receive(null);
            CollectionAssert.IsEmpty(calls);
            Assert.IsFalse(s.Agent.IsConfigured);
            Assert.AreEqual(1, s.Link.Sent.Count);
        }

        [Test]
        public void IsConfiguredStartsFalseAndBecomesTrueOnTheHostsFirstMessage()
        {
            var s = Make();
            Assert.IsFalse(s.Agent.IsConfigured);
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':1,'players':[]}}");
            Assert.IsTrue(s.Agent.IsConfigured);
        }

        [Test]
        public void SessionStartUpdatesSessionIdRoundAndPlayersWithoutCallingOnGameStart()
        {
            var s = Make();
            int started = 0;
            s.Agent.OnGameStart(i => started++);
            Assert.IsNull(s.Agent.SessionId);
            CollectionAssert.IsEmpty(s.Agent.Players);
            Assert.AreEqual(0, s.Agent.Round);
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_a','round':3,'players':['p_1']}}");
            Assert.AreEqual("ses_a", s.Agent.SessionId);
            Assert.AreEqual(3, s.Agent.Round);
            CollectionAssert.AreEqual(new[] { "p_1" }, s.Agent.Players);
            Assert.AreEqual(0, started);
        }

        [Test]
        public void GameStartUpdatesTheSessionFieldsAndCallsOnGameStart()
        {
            var s = Make();
            var starts = new List<GameStartInfo>();
            s.Agent.OnGameStart(starts.Add);
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_a','round':1,'players':[]}}");
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_b','players':['p_1','p_2'],'round':2}}");
            Assert.AreEqual(1, starts.Count);
            Assert.AreEqual("ses_b", starts[0].SessionId);
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, starts[0].Players);
            Assert.AreEqual(2, starts[0].Round);
            Assert.AreEqual("ses_b", s.Agent.SessionId);
            Assert.AreEqual(2, s.Agent.Round);
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, s.Agent.Players);
            // The game gets a copy; changing it must not change the SDK's view.
            starts[0].Players[0] = "p_x";
            s.Agent.Players[1] = "p_y";
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, s.Agent.Players);
        }

        [Test]
        public void GameStartCarriesThePlayersNamesWhenTheHostSendsThem()
        {
            var s = Make();
            var starts = new List<GameStartInfo>();
            s.Agent.OnGameStart(starts.Add);
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_a','players':['p_1','p_2'],'round':1}}");
            Assert.AreEqual(0, starts[0].Names.Count, "no names from a host that sends none");
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_a','players':['p_1','p_2'],'round':2,'names':{'p_1':'Amsel','p_2':'','p_3':7}}}");
            Assert.AreEqual(2, starts.Count);
            Assert.AreEqual(1, starts[1].Names.Count, "empty and non-string names are dropped");
            Assert.AreEqual("Amsel", starts[1].Names["p_1"]);
            Assert.AreEqual("Amsel", s.Agent.PlayerNames["p_1"]);
            // Copies: the game may change them without changing the SDK's view.
            starts[1].Names["p_1"] = "x";
            s.Agent.PlayerNames["p_1"] = "y";
            Assert.AreEqual("Amsel", s.Agent.PlayerNames["p_1"]);
        }

        [Test]
        public void ActionCallsOnActionWithPlayerIdActionAndActionId()
        {
            var s = Make();
            var calls = new List<string[]>();
            s.Agent.OnAction((p, a, id) => calls.Add(new[] { p, a, id }));
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':{'move':'e2e4'},'actionId':'a_1'}}");
            Assert.AreEqual(1, calls.Count);
            CollectionAssert.AreEqual(new[] { "p_1", T("{'move':'e2e4'}"), "a_1" }, calls[0]);
        }

        [Test]
        public void RepeatsOfAnActionIdAreDroppedActionsWithoutOneAreNeverDropped()
        {
            var s = Make();
            var calls = new List<string>();
            s.Agent.OnAction((p, a, id) => calls.Add(p + " " + a + " " + (id ?? "-")));
            const string msg = "{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':'rock','actionId':'a_1'}}";
            s.Link.Dispatch(msg);
            s.Link.Dispatch(msg);
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'paper','actionId':'a_1'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'paper','actionId':'a_2'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'x'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'x'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'y','actionId':null}}");
            CollectionAssert.AreEqual(new[]
            {
                "p_1 \"rock\" a_1", "p_2 \"paper\" a_2", "p_2 \"x\" -", "p_2 \"x\" -", "p_2 \"y\" -",
            }, calls);
        }

        [Test]
        public void TheDuplicateWindowIsBoundedButRecentIdsStayRemembered()
        {
            var s = Make();
            int n = 0;
            s.Agent.OnAction((p, a, id) => n++);
            for (int i = 0; i < 3000; i++)
                s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':" + i + ",'actionId':'a_" + i + "'}}");
            Assert.AreEqual(3000, n);
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':0,'actionId':'a_2999'}}");
            Assert.AreEqual(3000, n);
            // Exactly the last 2048 ids are remembered (a_952 .. a_2999), as in the JS SDK.
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':0,'actionId':'a_952'}}");
            Assert.AreEqual(3000, n);
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':0,'actionId':'a_951'}}");
            Assert.AreEqual(3001, n);
        }

        [Test]
        public void TimeoutCallsOnTimeoutWithStrikeMaxStrikesAndFinal()
        {
            var s = Make();
            var calls = new List<string>();
            s.Agent.OnTimeout((p, i) => calls.Add(p + " " + i.Strike + "/" + i.MaxStrikes + " " + i.Final));
            s.Link.Dispatch("{'type':'AGENT_TIMEOUT','data':{'playerId':'p_1','strike':2,'maxStrikes':2,'final':true}}");
            s.Link.Dispatch("{'type':'AGENT_TIMEOUT','data':{'playerId':'p_2','strike':1,'maxStrikes':2,'final':false}}");
            // Missing fields take the JS SDK's defaults: strike 1, maxStrikes null, final only when true.
            s.Link.Dispatch("{'type':'AGENT_TIMEOUT','data':{'playerId':'p_3','final':'yes'}}");
            CollectionAssert.AreEqual(new[] { "p_1 2/2 True", "p_2 1/2 False", "p_3 1/ False" }, calls);
        }

        [Test]
        public void SessionEndCallsOnSessionEndWithSessionIdResultAndReason()
        {
            var s = Make();
            var calls = new List<SessionEndInfo>();
            s.Agent.OnSessionEnd(calls.Add);
            s.Link.Dispatch("{'type':'AGENT_SESSION_END','data':{'sessionId':'ses_1','result':{'winner':null,'reason':'left'},'reason':'left'}}");
            Assert.AreEqual(1, calls.Count);
            Assert.AreEqual("ses_1", calls[0].SessionId);
            Assert.AreEqual(T("{'winner':null,'reason':'left'}"), calls[0].ResultJson);
            Assert.AreEqual("left", calls[0].Reason);
        }

        [Test]
        public void SessionEndWithoutSessionIdOrResultUsesTheCurrentSessionAndNull()
        {
            var s = Make();
            var calls = new List<SessionEndInfo>();
            s.Agent.OnSessionEnd(calls.Add);
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_9','round':1,'players':[]}}");
            s.Link.Dispatch("{'type':'AGENT_SESSION_END','data':{'result':null,'reason':'session_lost'}}");
            Assert.AreEqual("ses_9", calls[0].SessionId);
            Assert.IsNull(calls[0].ResultJson);
            Assert.AreEqual("session_lost", calls[0].Reason);
        }

        [Test]
        public void AnInboundActionRejectedReachesTheV1OnActionRejectedHandler()
        {
            var s = Make();
            var calls = new List<string>();
            s.Agent.OnActionRejected((p, r) => calls.Add(p + ": " + r));
            s.Link.Dispatch("{'type':'AGENT_ACTION_REJECTED','data':{'playerId':'p_1','reason':'nope'}}");
            CollectionAssert.AreEqual(new[] { "p_1: nope" }, calls);
        }

        [Test]
        public void MessagesWithoutARegisteredHandlerAreHarmless()
        {
            var s = Make();
            Assert.DoesNotThrow(() =>
            {
                s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'s','players':['a','b'],'round':1}}");
                s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'a','action':1,'actionId':'x'}}");
                s.Link.Dispatch("{'type':'AGENT_TIMEOUT','data':{'playerId':'a','strike':1,'maxStrikes':2,'final':false}}");
                s.Link.Dispatch("{'type':'AGENT_SESSION_END','data':{'sessionId':'s','result':null,'reason':'left'}}");
                s.Link.Dispatch("{'type':'AGENT_ACTION_REJECTED','data':{'playerId':'a','reason':'r'}}");
                s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'__system__','action':{'type':'__game_start__','players':['a','b']}}}");
                s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'a','action':{'type':'__timeout__'}}}");
            });
        }

        [Test]
        public void RegisteringAHandlerAgainReplacesThePreviousOneHandlersChain()
        {
            var s = Make();
            var calls = new List<string>();
            Assert.AreSame(s.Agent, s.Agent.OnAction((p, a, id) => calls.Add("first")));
            s.Agent.OnAction((p, a, id) => calls.Add("second"));
            Assert.AreSame(s.Agent, s.Agent.OnGameStart(i => { }));
            Assert.AreSame(s.Agent, s.Agent.OnTimeout((p, i) => { }));
            Assert.AreSame(s.Agent, s.Agent.OnSessionEnd(i => { }));
            Assert.AreSame(s.Agent, s.Agent.OnActionRejected((p, r) => { }));
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':1,'actionId':'a_1'}}");
            CollectionAssert.AreEqual(new[] { "second" }, calls);
        }

        [Test]
        public void V1GameStartFromSystemGoesToOnGameStartWhenOneIsRegistered()
        {
            var s = Make();
            var starts = new List<GameStartInfo>();
            var actions = new List<string>();
            s.Agent.OnGameStart(starts.Add);
            s.Agent.OnAction((p, a, id) => actions.Add(a));
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'__system__','action':{'type':'__game_start__','players':['p_1','p_2']}}}");
            CollectionAssert.IsEmpty(actions);
            Assert.AreEqual(1, starts.Count);
            Assert.IsNull(starts[0].SessionId);
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, starts[0].Players);
            Assert.AreEqual(1, starts[0].Round);
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, s.Agent.Players);
        }

        [Test]
        public void V1GameStartGoesToOnActionWhenNoOnGameStartHandlerIsRegistered()
        {
            var s = Make();
            var actions = new List<string[]>();
            s.Agent.OnAction((p, a, id) => actions.Add(new[] { p, a, id }));
            const string action = "{'type':'__game_start__','players':['p_1','p_2']}";
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'__system__','action':" + action + ",'actionId':'a_9'}}");
            Assert.AreEqual(1, actions.Count);
            CollectionAssert.AreEqual(new[] { "__system__", T(action), "a_9" }, actions[0]);
            // The SDK still learned the players and the v1 round.
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, s.Agent.Players);
            Assert.AreEqual(1, s.Agent.Round);
        }

        [Test]
        public void V1GameStartFromARealPlayerIsJustAnAction()
        {
            var s = Make();
            int starts = 0;
            int actions = 0;
            s.Agent.OnGameStart(i => starts++);
            s.Agent.OnAction((p, a, id) => actions++);
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':{'type':'__game_start__'},'actionId':'a_1'}}");
            Assert.AreEqual(0, starts);
            Assert.AreEqual(1, actions);
        }

        [Test]
        public void V1TimeoutActionGoesToOnTimeoutWithStrike1NoMaxNotFinal()
        {
            var s = Make();
            var timeouts = new List<string>();
            var actions = new List<string>();
            s.Agent.OnTimeout((p, i) => timeouts.Add(p + " " + i.Strike + " " + (i.MaxStrikes.HasValue ? "max" : "no max") + " " + i.Final));
            s.Agent.OnAction((p, a, id) => actions.Add(a));
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':{'type':'__timeout__'},'actionId':'a_t'}}");
            CollectionAssert.AreEqual(new[] { "p_2 1 no max False" }, timeouts);
            CollectionAssert.IsEmpty(actions);
        }

        [Test]
        public void OutboundMessageShapes()
        {
            var s = Make();
            s.Link.Sent.Clear();
            s.Agent.SetState(T("{'fen':'x'}"));
            s.Agent.SetObservation("p_1", T("{'hand':[1]}"));
            s.Agent.SetLegalActions("p_1", new[] { T("'e2e4'") });
            s.Agent.EndGame(T("{'winner':'p_1','reason':'checkmate'}"));
            s.Agent.Rematch();
            CollectionAssert.AreEqual(new[]
            {
                T("{'type':'AGENT_STATE','data':{'state':{'fen':'x'}}}"),
                T("{'type':'AGENT_OBSERVATION','data':{'playerId':'p_1','observation':{'hand':[1]}}}"),
                T("{'type':'AGENT_LEGAL_ACTIONS','data':{'playerId':'p_1','actions':['e2e4']}}"),
                T("{'type':'AGENT_GAME_OVER','data':{'result':{'winner':'p_1','reason':'checkmate'}}}"),
                T("{'type':'AGENT_REMATCH','data':{}}"),
            }, s.Link.Sent);
        }

        [Test]
        public void RejectActionFillsActionIdWithTheLastActionDeliveredToThatPlayer()
        {
            var s = Make();
            s.Agent.OnAction((p, a, id) => { });
            s.Agent.RejectAction("p_1", "no action yet");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':'a','actionId':'a_1'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':'b','actionId':'a_2'}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':'c','actionId':'a_3'}}");
            s.Agent.RejectAction("p_1", "illegal");
            s.Agent.RejectAction("p_2", "also illegal");
            CollectionAssert.AreEqual(new[]
            {
                "{'playerId':'p_1','reason':'no action yet'}",
                "{'playerId':'p_1','reason':'illegal','actionId':'a_3'}",
                "{'playerId':'p_2','reason':'also illegal','actionId':'a_2'}",
            }, s.Link.SentOfTypeText("AGENT_ACTION_REJECTED"));
        }

        [Test]
        public void DisposeStopsListening()
        {
            var s = Make();
            Assert.AreEqual(1, s.Link.OpenCount);
            Assert.IsTrue(s.Link.IsOpen);
            s.Agent.Dispose();
            Assert.IsFalse(s.Link.IsOpen);
            s.Agent.Dispose();
            Assert.AreEqual(1, s.Link.CloseCount);
        }

        // ---- beyond the JS SDK's cases ----

        [Test]
        public void TheDefaultHostLinkIsUsedByTheOneArgumentConstructor()
        {
            var link = new FakeHostLink();
            RcadiaAgent.DefaultHostLink = () => link;
            var agent = new RcadiaAgent(new AgentConfig { GameType = "go" });
            Assert.AreEqual(1, link.OpenCount);
            Assert.AreEqual("go", link.SentOfType("AGENT_CONFIGURE")[0]["gameType"].AsString);
            link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_d','round':1,'players':[]}}");
            Assert.AreEqual("ses_d", agent.SessionId);
            RcadiaAgent.DefaultHostLink = () => null;
            Assert.Throws<InvalidOperationException>(() => new RcadiaAgent());
        }

        [Test]
        public void ActionsPassThroughAsTheirExactJsonText()
        {
            var s = Make();
            var got = new List<string>();
            s.Agent.OnAction((p, a, id) => got.Add(a));
            const string action = "{ \"b\" : 1.50, \"a\":[true ,null,-0,1E+2], \"s\":\"\\u00e9\\n\\ud83d\\ude00\" }";
            s.Link.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_1\",\"action\":" + action + ",\"actionId\":\"a_1\"}}");
            s.Link.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_1\",\"action\":null,\"actionId\":\"a_2\"}}");
            s.Link.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_1\",\"actionId\":\"a_3\"}}");
            CollectionAssert.AreEqual(new[] { action.Trim(), "null", null }, got);
        }

        [Test]
        public void StatesPassThroughAsTheirExactJsonTextWithoutSurroundingWhitespace()
        {
            var s = Make();
            s.Link.Sent.Clear();
            const string state = "{ \"n\": 1.0e3,  \"big\": 123456789012345678901234567890 }";
            s.Agent.SetState("  \n" + state + "\t ");
            Assert.AreEqual("{\"type\":\"AGENT_STATE\",\"data\":{\"state\":" + state + "}}", s.Link.Sent[0]);
        }

        [Test]
        public void JsonValueOverloadsSendTheSameAsText()
        {
            var a = Make();
            var b = Make();
            var state = JsonValue.NewObject().Set("board", JsonValue.FromString("X..")).Set("turn", JsonValue.FromInteger(3));
            a.Agent.SetState(state);
            b.Agent.SetState(state.ToJson());
            a.Agent.SetObservation("p_1", Json.Parse("[1,2]"));
            b.Agent.SetObservation("p_1", "[1,2]");
            a.Agent.SetLegalActions("p_1", Json.Parse("[{\"cell\":0}, \"pass\"]"));
            b.Agent.SetLegalActions("p_1", new[] { "{\"cell\":0}", "\"pass\"" });
            a.Agent.EndGame(JsonValue.NewObject().Set("winner", JsonValue.Null));
            b.Agent.EndGame("{\"winner\":null}");
            a.Agent.SetState((JsonValue)null);
            b.Agent.SetState((string)null);
            CollectionAssert.AreEqual(b.Link.Sent, a.Link.Sent);
            Assert.AreEqual("{\"type\":\"AGENT_STATE\",\"data\":{\"state\":null}}", a.Link.Sent[a.Link.Sent.Count - 1]);
            Assert.AreEqual("{\"type\":\"AGENT_LEGAL_ACTIONS\",\"data\":{\"playerId\":\"p_1\",\"actions\":[{\"cell\":0},\"pass\"]}}", a.Link.Sent[3]);
        }

        [Test]
        public void BadArgumentsThrowDocumentedExceptionsAndSendNothing()
        {
            var s = Make();
            s.Link.Sent.Clear();
            var e = Assert.Throws<ArgumentException>(() => s.Agent.SetState("{fen: 'x'}"));
            StringAssert.Contains("stateJson must be JSON text", e.Message);
            Assert.Throws<ArgumentException>(() => s.Agent.SetObservation("p_1", "[1,"));
            Assert.Throws<ArgumentException>(() => s.Agent.SetLegalActions("p_1", new[] { "1", "two" }));
            Assert.Throws<ArgumentException>(() => s.Agent.SetLegalActions("p_1", Json.Parse("{}")));
            Assert.Throws<ArgumentException>(() => s.Agent.EndGame("{} {}"));
            Assert.Throws<ArgumentException>(() => s.Agent.EndGame(""));
            Assert.Throws<ArgumentException>(() => s.Agent.EndGame("\"p_1\""));
            Assert.Throws<ArgumentException>(() => s.Agent.EndGame("[\"p_1\"]"));
            Assert.Throws<ArgumentException>(() => s.Agent.EndGame(JsonValue.FromInteger(1)));
            Assert.Throws<ArgumentNullException>(() => s.Agent.SetObservation(null, "1"));
            Assert.Throws<ArgumentNullException>(() => s.Agent.SetLegalActions(null, new string[0]));
            Assert.Throws<ArgumentNullException>(() => s.Agent.SetLegalActions("p_1", (IEnumerable<string>)null));
            Assert.Throws<ArgumentNullException>(() => s.Agent.RejectAction(null, "r"));
            Assert.Throws<ArgumentNullException>(() => s.Agent.RejectAction("p_1", null));
            CollectionAssert.IsEmpty(s.Link.Sent);
        }

        [Test]
        public void LoneSurrogatesAreEscapedOnTheWayOutSoUtf8CannotMangleThem()
        {
            var s = Make();
            s.Link.Sent.Clear();
            s.Agent.SetState("\"a\ud800b\"");
            s.Agent.RejectAction("p_\udc00", "x\ud83d\ude00");
            Assert.AreEqual("{\"type\":\"AGENT_STATE\",\"data\":{\"state\":\"a\\ud800b\"}}", s.Link.Sent[0]);
            Assert.AreEqual("{\"type\":\"AGENT_ACTION_REJECTED\",\"data\":{\"playerId\":\"p_\\udc00\",\"reason\":\"x\ud83d\ude00\"}}", s.Link.Sent[1]);
        }

        [Test]
        public void FieldsOfTheWrongTypeAreIgnoredOrTakeTheirDefaults()
        {
            // Where the JS SDK would pass an odd value through, the typed C# SDK ignores it
            // (README: "Where the C# SDK differs").
            var s = Make();
            var starts = new List<GameStartInfo>();
            var actions = new List<string>();
            s.Agent.OnGameStart(starts.Add);
            s.Agent.OnAction((p, a, id) => actions.Add((p ?? "null") + " " + (id ?? "null")));
            s.Link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':2,'players':['p_1','p_2']}}");
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':7,'players':['p_1',3],'round':2.5}}");
            Assert.AreEqual("ses_1", starts[0].SessionId);
            CollectionAssert.AreEqual(new[] { "p_1", "p_2" }, starts[0].Players);
            Assert.AreEqual(2, starts[0].Round);
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':{'round':3.0}}");
            Assert.AreEqual(3, s.Agent.Round);
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':'not an object'}");
            s.Link.Dispatch("{'type':'AGENT_GAME_START','data':[1,2]}");
            s.Link.Dispatch("{'type':'AGENT_GAME_START'}");
            Assert.AreEqual(5, starts.Count);
            Assert.AreEqual("ses_1", s.Agent.SessionId);
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':5,'action':1,'actionId':6}}");
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':5,'action':1,'actionId':6}}");
            CollectionAssert.AreEqual(new[] { "null null", "null null" }, actions);
        }

        [Test]
        public void AHandlerExceptionComesOutOfReceiveAndTheAgentKeepsWorking()
        {
            var s = Make();
            int calls = 0;
            s.Agent.OnAction((p, a, id) =>
            {
                calls++;
                throw new InvalidOperationException("game bug");
            });
            const string msg = "{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':1,'actionId':'a_1'}}";
            Assert.Throws<InvalidOperationException>(() => s.Link.Dispatch(msg));
            s.Link.Dispatch(msg); // already delivered once: dropped, so the handler is not called again
            Assert.AreEqual(1, calls);
            s.Agent.RejectAction("p_1", "after the bug");
            Assert.AreEqual("a_1", s.Link.SentOfType("AGENT_ACTION_REJECTED")[0]["actionId"].AsString);
        }

        [Test]
        public void HandlersMayCallTheAgentWhileItDelivers()
        {
            var s = Make();
            s.Agent.OnAction((p, a, id) =>
            {
                s.Agent.RejectAction(p, "nope");
                s.Agent.SetLegalActions(p, new[] { "1" });
            });
            s.Link.Dispatch("{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':1,'actionId':'a_1'}}");
            CollectionAssert.AreEqual(
                new[] { "AGENT_CONFIGURE", "AGENT_ACTION_REJECTED", "AGENT_LEGAL_ACTIONS" },
                s.Link.Sent.ConvertAll(t => Json.Parse(t)["type"].AsString));
            Assert.AreEqual("a_1", s.Link.SentOfType("AGENT_ACTION_REJECTED")[0]["actionId"].AsString);
        }

        [Test]
        public void ConfigNumbersAreWrittenTheSameInEveryCulture()
        {
            var before = System.Threading.Thread.CurrentThread.CurrentCulture;
            try
            {
                System.Threading.Thread.CurrentThread.CurrentCulture = new System.Globalization.CultureInfo("de-DE");
                var s = Make(new AgentConfig { TurnTimeout = 2.5, MaxTurnTimeouts = 3, ForfeitOnTimeout = false });
                Assert.AreEqual(
                    "{'minPlayers':2,'maxPlayers':2,'turnBased':true,'simultaneous':false,'gameType':'custom','sdkVersion':'2.0.0','turnTimeout':2.5,'maxTurnTimeouts':3,'forfeitOnTimeout':false}",
                    s.Link.SentOfTypeText("AGENT_CONFIGURE")[0]);
                Assert.AreEqual(2.5, Json.Parse("2.5").AsNumber);
            }
            finally
            {
                System.Threading.Thread.CurrentThread.CurrentCulture = before;
            }
        }

        [Test]
        public void AConfigTheServerWouldRefuseThrowsAtOnceSayingWhatToFix()
        {
            var bad = new[]
            {
                new KeyValuePair<AgentConfig, string>(new AgentConfig { MinPlayers = 0 }, "AgentConfig.MinPlayers must be between 1 and 64, got 0"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { MinPlayers = 65 }, "AgentConfig.MinPlayers must be between 1 and 64, got 65"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { MinPlayers = 3, MaxPlayers = 2 }, "AgentConfig.MaxPlayers must be between MinPlayers (3) and 64, or null for MinPlayers; got 2"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { MaxPlayers = 65 }, "AgentConfig.MaxPlayers must be between MinPlayers (2) and 64"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { MaxTurnTimeouts = -1 }, "AgentConfig.MaxTurnTimeouts must be 0 or more (null: the platform default), got -1"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { TurnTimeout = -0.5 }, "AgentConfig.TurnTimeout is in seconds and must be a finite number from 0 to 31536000 (365 days) (0: no clock; null: the platform default); got -0.5"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { TurnTimeout = 1e12 }, "from 0 to 31536000 (365 days)"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { TurnTimeout = double.NaN }, "got NaN"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { TurnTimeout = double.PositiveInfinity }, "AgentConfig.TurnTimeout is in seconds"),
                new KeyValuePair<AgentConfig, string>(new AgentConfig { TurnTimeout = double.NegativeInfinity }, "AgentConfig.TurnTimeout is in seconds"),
            };
            foreach (var c in bad)
            {
                var link = new FakeHostLink();
                var e = Assert.Throws<ArgumentException>(() => new RcadiaAgent(c.Key, link), c.Value);
                StringAssert.Contains(c.Value, e.Message);
                Assert.AreEqual("config", e.ParamName);
                Assert.AreEqual(0, link.Sent.Count + link.OpenCount, "a refused config opens and sends nothing");
            }
            // The default link is not made either (in Unity it would be a GameObject left behind).
            int links = 0;
            RcadiaAgent.DefaultHostLink = () => { links++; return new FakeHostLink(); };
            Assert.Throws<ArgumentException>(() => new RcadiaAgent(new AgentConfig { MinPlayers = 0 }));
            Assert.AreEqual(0, links);
        }

        [Test]
        public void TheEdgesTheServerAcceptsAreSentAsTheyAre()
        {
            var s = Make(new AgentConfig { MinPlayers = 1, MaxPlayers = 64, TurnTimeout = 0, MaxTurnTimeouts = 0 });
            Assert.AreEqual(
                "{'minPlayers':1,'maxPlayers':64,'turnBased':true,'simultaneous':false,'gameType':'custom','sdkVersion':'2.0.0','turnTimeout':0,'maxTurnTimeouts':0}",
                s.Link.SentOfTypeText("AGENT_CONFIGURE")[0]);
            var year = Make(new AgentConfig { TurnTimeout = 31536000 });
            Assert.AreEqual(31536000, year.Link.SentOfType("AGENT_CONFIGURE")[0]["turnTimeout"].AsNumber);
            var one = Make(new AgentConfig { MinPlayers = 64 });
            Assert.AreEqual(64, one.Link.SentOfType("AGENT_CONFIGURE")[0]["maxPlayers"].AsNumber);
        }

        [Test]
        public void TheConfigIsReadOnceAtConstruction()
        {
            var config = new AgentConfig { GameType = "a" };
            var s = new Setup(config);
            config.GameType = "b";
            s.Link.Dispatch("{'type':'AGENT_REQUEST_CONFIGURE','data':{}}");
            Assert.AreEqual("a", s.Link.SentOfType("AGENT_CONFIGURE")[1]["gameType"].AsString);
            var nullType = new Setup(new AgentConfig { GameType = null });
            Assert.AreEqual("custom", nullType.Link.SentOfType("AGENT_CONFIGURE")[0]["gameType"].AsString);
        }
    }
}
