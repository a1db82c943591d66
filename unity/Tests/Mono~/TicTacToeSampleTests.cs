using System.Collections.Generic;
using NUnit.Framework;
using Rcadia.Samples.TicTacToe;

namespace Rcadia.Agent.Tests
{
    /// <summary>
    /// The sample game (Samples~/TicTacToe) played through the C# agent as a host would drive
    /// it. Mono-only: Unity does not compile a package's Samples~ until they are imported.
    /// </summary>
    [TestFixture]
    public class TicTacToeSampleTests
    {
        FakeHostLink link;
        RcadiaAgent agent;
        TicTacToeTable table;

        [SetUp]
        public void Start()
        {
            next = 0;
            link = new FakeHostLink();
            agent = new RcadiaAgent(TicTacToeTable.Config(), link);
            table = new TicTacToeTable(agent);
            link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':1,'players':[]}}");
            link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_1','players':['p_x','p_o'],'round':1}}");
        }

        int next;

        void Play(string playerId, string actionJson)
        {
            next++;
            link.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"" + playerId + "\",\"action\":" + actionJson + ",\"actionId\":\"a_" + next + "\"}}");
        }

        static string Text(JsonValue v)
        {
            return v.ToNormalizedJson().Replace('"', '\'');
        }

        [Test]
        public void ConfiguresAndPublishesTheFirstTurn()
        {
            Assert.AreEqual(
                "{'minPlayers':2,'maxPlayers':2,'turnBased':true,'simultaneous':false,'gameType':'tictactoe','sdkVersion':'2.0.0','turnTimeout':30,'autoRematch':true}",
                Text(link.SentOfType("AGENT_CONFIGURE")[0]));
            Assert.AreEqual("{'state':{'board':'.........','toMove':'p_x','winner':null}}", Text(link.SentOfType("AGENT_STATE")[0]));
            var legal = link.SentOfType("AGENT_LEGAL_ACTIONS")[0];
            Assert.AreEqual("p_x", legal["playerId"].AsString);
            Assert.AreEqual(9, legal["actions"].Count);
            Assert.AreEqual("{'cell':4}", Text(legal["actions"][4]));
        }

        [Test]
        public void AWinEndsTheGameWithTheWinnersPlayerId()
        {
            Play("p_x", "{\"cell\":0}");
            Play("p_o", "{\"cell\":3}");
            Play("p_x", "{\"cell\":1}");
            Play("p_o", "{\"cell\":4}");
            Play("p_x", "{\"cell\":2}");
            var states = link.SentOfType("AGENT_STATE");
            Assert.AreEqual("{'board':'XXXOO....','toMove':null,'winner':'p_x'}", Text(states[states.Count - 1]["state"]));
            Assert.AreEqual(new List<string> { "{'result':{'winner':'p_x'}}" }, link.SentOfType("AGENT_GAME_OVER").ConvertAll(Text));
            Assert.AreEqual("p_x won", table.Status);
        }

        [Test]
        public void IllegalMovesAreRejectedWithTheirActionIdAndTheTurnStays()
        {
            Play("p_x", "{\"cell\":4}");
            Play("p_o", "{\"cell\":4}");
            Play("p_o", "{\"cell\":9}");
            Play("p_x", "{\"cell\":0}");
            Play("p_o", "\"four\"");
            Play("p_o", "{\"cell\":\"4\"}");
            Assert.AreEqual(new List<string>
            {
                "{'playerId':'p_o','reason':'cell 4 is taken','actionId':'a_2'}",
                "{'playerId':'p_o','reason':'cell must be 0-8, row by row from the top left','actionId':'a_3'}",
                "{'playerId':'p_x','reason':'it is not your turn','actionId':'a_4'}",
                "{'playerId':'p_o','reason':'an action is {\\'cell\\': N} with N 0-8','actionId':'a_5'}",
                "{'playerId':'p_o','reason':'an action is {\\'cell\\': N} with N 0-8','actionId':'a_6'}",
            }, link.SentOfType("AGENT_ACTION_REJECTED").ConvertAll(Text));
            Assert.AreEqual("....X....", table.Rules.Board);
            Assert.AreEqual("p_o", table.Rules.ToMove);
        }

        [Test]
        public void AFullBoardIsADrawAndTheNextRoundStartsFresh()
        {
            foreach (var move in new[] { "x0", "o1", "x2", "o4", "x3", "o5", "x7", "o6", "x8" })
                Play(move[0] == 'x' ? "p_x" : "p_o", "{\"cell\":" + move[1] + "}");
            Assert.AreEqual("{'result':{'winner':null}}", Text(link.SentOfType("AGENT_GAME_OVER")[0]));
            Assert.AreEqual("a draw", table.Status);
            // Round 2 (autoRematch): same players, a new board, seat 0 moves first again.
            link.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_2','round':2,'players':['p_x','p_o']}}");
            link.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_2','players':['p_x','p_o'],'round':2}}");
            Assert.AreEqual(".........", table.Rules.Board);
            Assert.AreEqual("round 2: p_x vs p_o", table.Status);
        }

        [Test]
        public void AnActionBeforeTheGameStartsIsRejectedNotThrown()
        {
            // A reloaded game: the host re-sends only AGENT_SESSION_START and keeps
            // delivering actions; no AGENT_GAME_START has reached this table yet.
            var reloadedLink = new FakeHostLink();
            var reloaded = new TicTacToeTable(new RcadiaAgent(TicTacToeTable.Config(), reloadedLink));
            reloadedLink.Dispatch("{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':1,'players':['p_x','p_o']}}");
            Assert.IsNull(reloaded.Rules.ToMove);
            Assert.AreEqual(".........", reloaded.Rules.Board);
            CollectionAssert.IsEmpty(reloaded.Rules.LegalCells());
            reloadedLink.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_x\",\"action\":{\"cell\":4},\"actionId\":\"a_1\"}}");
            Assert.AreEqual(
                new List<string> { "{'playerId':'p_x','reason':'the game has not started yet: wait for your turn','actionId':'a_1'}" },
                reloadedLink.SentOfType("AGENT_ACTION_REJECTED").ConvertAll(Text));
            // The game start that follows is played as usual.
            reloadedLink.Dispatch("{'type':'AGENT_GAME_START','data':{'sessionId':'ses_1','players':['p_x','p_o'],'round':1}}");
            reloadedLink.DispatchRaw("{\"type\":\"AGENT_ACTION\",\"data\":{\"playerId\":\"p_x\",\"action\":{\"cell\":4},\"actionId\":\"a_2\"}}");
            Assert.AreEqual("....X....", reloaded.Rules.Board);
            Assert.AreEqual("p_o", reloaded.Rules.ToMove);
        }

        [Test]
        public void TimeoutsAndSessionEndsShowUpInTheStatus()
        {
            link.Dispatch("{'type':'AGENT_TIMEOUT','data':{'playerId':'p_x','strike':2,'maxStrikes':2,'final':true}}");
            Assert.AreEqual("p_x ran out of time (strike 2, forfeit)", table.Status);
            link.Dispatch("{'type':'AGENT_SESSION_END','data':{'sessionId':'ses_1','result':{'winner':'p_o','reason':'timeout'},'reason':'timeout'}}");
            Assert.AreEqual("the platform ended the game: timeout", table.Status);
        }
    }
}
