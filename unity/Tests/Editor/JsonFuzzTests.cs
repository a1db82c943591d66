using System;
using System.Collections.Generic;
using System.Text;
using NUnit.Framework;

namespace Rcadia.Agent.Tests
{
    /// <summary>
    /// The parser reads untrusted text, so it is hammered with seeded random input: it must
    /// never throw (except <see cref="JsonException"/> from <see cref="Json.Parse"/>), its
    /// three entry points must agree, and whatever it accepts must round-trip. The agent gets
    /// the same treatment with damaged host messages. Tests/Node~/json-differential.test.mjs
    /// also checks acceptance against JSON.parse itself.
    /// </summary>
    [TestFixture]
    public class JsonFuzzTests
    {
        const string Alphabet = "{}[]\",:\\ \t\n\r0123456789eE+-.truefalsn/bu\u00e9\u2028\ud800\udc00\ud83d\ude00\u0000\u001fx'";

        /// <summary>Parse, TryParse and IsValid agree and throw nothing but JsonException.</summary>
        static bool Check(string text)
        {
            JsonValue tried;
            string error;
            bool ok = Json.TryParse(text, out tried, out error);
            Assert.AreEqual(ok, Json.IsValid(text), text);
            Assert.AreEqual(ok, error == null, text);
            JsonValue parsed = null;
            try
            {
                parsed = Json.Parse(text);
                Assert.IsTrue(ok, "Parse accepted what TryParse refused: " + text);
            }
            catch (JsonException e)
            {
                Assert.IsFalse(ok, "Parse refused what TryParse accepted: " + text);
                Assert.AreEqual(error, e.Message);
                Assert.That(e.Offset, Is.InRange(0, text.Length));
            }
            if (!ok) return false;
            // Accepted text keeps its exact source and normalizes to a fixed point.
            Assert.AreEqual(text.Trim(' ', '\t', '\n', '\r'), parsed.ToJson());
            string normal = parsed.ToNormalizedJson();
            Assert.IsTrue(Json.IsValid(normal), normal);
            Assert.AreEqual(normal, Json.Parse(normal).ToNormalizedJson());
            return true;
        }

        [Test]
        public void RandomTextNeverThrows()
        {
            var rng = new Prng(1);
            int accepted = 0;
            for (int i = 0; i < 20000; i++)
            {
                int length = rng.Below(24);
                var sb = new StringBuilder(length);
                for (int j = 0; j < length; j++) sb.Append(Alphabet[rng.Below(Alphabet.Length)]);
                if (Check(sb.ToString())) accepted++;
            }
            // Some short random strings are JSON ("1", "[]", "-0"): the check ran both ways.
            Assert.That(accepted, Is.GreaterThan(100));
        }

        [Test]
        public void DamagedDocumentsNeverThrow()
        {
            var rng = new Prng(2);
            int accepted = 0;
            int refused = 0;
            for (int i = 0; i < 4000; i++)
            {
                string doc = RandomValue(rng, 0).ToJson();
                string damaged = Damage(rng, doc);
                if (Check(damaged)) accepted++;
                else refused++;
            }
            Assert.That(accepted, Is.GreaterThan(100));
            Assert.That(refused, Is.GreaterThan(1000));
        }

        [Test]
        public void EveryPrefixOfADocumentIsHandled()
        {
            var rng = new Prng(3);
            for (int i = 0; i < 40; i++)
            {
                string doc = RandomValue(rng, 0).ToJson();
                for (int cut = 0; cut < doc.Length; cut++) Check(doc.Substring(0, cut));
                Assert.IsTrue(Check(doc), doc);
            }
        }

        [Test]
        public void BuiltValuesRoundTrip()
        {
            var rng = new Prng(4);
            for (int i = 0; i < 3000; i++)
            {
                JsonValue built = RandomValue(rng, 0);
                string text = built.ToJson();
                Assert.IsTrue(Check(text), text);
                Assert.AreEqual(built.ToNormalizedJson(), Json.Parse(text).ToNormalizedJson());
            }
        }

        [Test]
        public void DamagedHostMessagesNeverMakeTheAgentThrow()
        {
            var rng = new Prng(5);
            string[] templates =
            {
                "{'type':'AGENT_SESSION_START','data':{'sessionId':'ses_1','round':1,'players':[]}}",
                "{'type':'AGENT_GAME_START','data':{'sessionId':'ses_1','players':['p_1','p_2'],'round':2}}",
                "{'type':'AGENT_ACTION','data':{'playerId':'p_1','action':{'move':'e2e4'},'actionId':'a_1'}}",
                "{'type':'AGENT_ACTION','data':{'playerId':'__system__','action':{'type':'__game_start__','players':['p_1','p_2']}}}",
                "{'type':'AGENT_ACTION','data':{'playerId':'p_2','action':{'type':'__timeout__'},'actionId':'a_t'}}",
                "{'type':'AGENT_TIMEOUT','data':{'playerId':'p_1','strike':2,'maxStrikes':2,'final':true}}",
                "{'type':'AGENT_SESSION_END','data':{'sessionId':'ses_1','result':{'winner':null},'reason':'left'}}",
                "{'type':'AGENT_ACTION_REJECTED','data':{'playerId':'p_1','reason':'nope'}}",
                "{'type':'AGENT_REQUEST_CONFIGURE','data':{}}",
            };
            var link = new FakeHostLink();
            var agent = new RcadiaAgent(new AgentConfig(), link);
            int events = 0;
            agent.OnGameStart(i => { events++; Assert.IsNotNull(i.Players); })
                .OnAction((p, a, id) => { events++; if (a != null) Assert.IsTrue(Json.IsValid(a), a); })
                .OnTimeout((p, i) => events++)
                .OnSessionEnd(i => { events++; if (i.ResultJson != null) Assert.IsTrue(Json.IsValid(i.ResultJson)); })
                .OnActionRejected((p, r) => events++);
            for (int i = 0; i < 20000; i++)
            {
                string message = FakeHostLink.Tick(templates[rng.Below(templates.Length)]);
                link.DispatchRaw(rng.Below(4) == 0 ? message : Damage(rng, message));
                // The game answers as a game would, with whatever ids the SDK handed it.
                if (rng.Below(8) == 0) agent.RejectAction("p_1", "fuzz");
            }
            Assert.That(events, Is.GreaterThan(2000));
            Assert.IsNotNull(agent.Players);
        }

        // ---- generators ----

        static readonly string[] Strings = { "", "a", "e2e4", "\u00e9", "\ud83d\ude00", "\"q\"", "back\\slash", "tab\t", "\u0001", "\ud800", "</script>" };
        static readonly double[] Numbers = { 0, -0.0, 1, -1, 0.5, 1e21, 1.5e-7, 123456.789, 9007199254740993, -2.5e300, 5e-324 };

        static JsonValue RandomValue(Prng rng, int depth)
        {
            int pick = rng.Below(depth > 4 ? 5 : 7);
            switch (pick)
            {
                case 0: return JsonValue.Null;
                case 1: return JsonValue.FromBoolean(rng.Below(2) == 0);
                case 2: return JsonValue.FromNumber(Numbers[rng.Below(Numbers.Length)]);
                case 3: return JsonValue.FromInteger((long)rng.Next64() >> rng.Below(64));
                case 4: return JsonValue.FromString(Strings[rng.Below(Strings.Length)]);
                case 5:
                    {
                        var a = JsonValue.NewArray();
                        int n = rng.Below(4);
                        for (int i = 0; i < n; i++) a.Add(RandomValue(rng, depth + 1));
                        return a;
                    }
                default:
                    {
                        var o = JsonValue.NewObject();
                        int n = rng.Below(4);
                        for (int i = 0; i < n; i++) o.Set(Strings[rng.Below(Strings.Length)], RandomValue(rng, depth + 1));
                        return o;
                    }
            }
        }

        static string Damage(Prng rng, string text)
        {
            var sb = new StringBuilder(text);
            int edits = 1 + rng.Below(3);
            for (int e = 0; e < edits; e++)
            {
                int at = sb.Length == 0 ? 0 : rng.Below(sb.Length);
                switch (rng.Below(5))
                {
                    case 0:
                        sb.Insert(at, Alphabet[rng.Below(Alphabet.Length)]);
                        break;
                    case 1:
                        if (sb.Length > 0) sb.Remove(at, 1);
                        break;
                    case 2:
                        if (sb.Length > 0) sb[at] = Alphabet[rng.Below(Alphabet.Length)];
                        break;
                    case 3:
                        sb.Length = at; // cut short
                        break;
                    default:
                        if (sb.Length > 1)
                        {
                            int other = rng.Below(sb.Length);
                            char c = sb[at];
                            sb[at] = sb[other];
                            sb[other] = c;
                        }
                        break;
                }
            }
            return sb.ToString();
        }
    }
}
