using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using NUnit.Framework;

namespace Rcadia.Agent.Tests
{
    [TestFixture]
    public class JsonTests
    {
        // ---- reading ----

        [Test]
        public void ParsesEveryKindOfValue()
        {
            var v = Json.Parse("{\"n\":null,\"t\":true,\"f\":false,\"i\":-12,\"d\":0.25,\"e\":1e3,\"s\":\"hi\",\"a\":[1,[2]],\"o\":{\"k\":\"v\"}}");
            Assert.AreEqual(JsonKind.Object, v.Kind);
            Assert.AreEqual(9, v.Count);
            Assert.IsTrue(v["n"].IsNull);
            Assert.AreEqual(true, v["t"].AsBoolean);
            Assert.AreEqual(false, v["f"].AsBoolean);
            Assert.AreEqual(-12.0, v["i"].AsNumber);
            Assert.AreEqual(0.25, v["d"].AsNumber);
            Assert.AreEqual(1000.0, v["e"].AsNumber);
            Assert.AreEqual("hi", v["s"].AsString);
            Assert.AreEqual(JsonKind.Array, v["a"].Kind);
            Assert.AreEqual(2.0, v["a"][1][0].AsNumber);
            Assert.AreEqual("v", v["o"]["k"].AsString);
        }

        [Test]
        public void AccessorsOfTheWrongKindGiveNullNotExceptions()
        {
            var v = Json.Parse("[\"x\", 1, {}]");
            Assert.IsNull(v["key"]);
            Assert.IsNull(v[3]);
            Assert.IsNull(v[-1]);
            Assert.IsNull(v[0].AsBoolean);
            Assert.IsNull(v[0].AsNumber);
            Assert.IsNull(v[1].AsString);
            Assert.IsNull(v[1][0]);
            Assert.IsNull(v[2]["missing"]);
            Assert.IsNull(v[2][(string)null]);
            Assert.AreEqual(0, v[0].Count);
            CollectionAssert.IsEmpty(v[0].Items);
            CollectionAssert.IsEmpty(v[0].Members);
            CollectionAssert.IsEmpty(v.Members);
            int n;
            Assert.IsFalse(v[0].TryGetInt32(out n));
        }

        [Test]
        public void ToJsonGivesTheExactSourceTextOfEachParsedValue()
        {
            const string text = " { \"a\" : [ 1.50 , \"\\u0041\" , { } ] , \"b\":-0.0e+00 } ";
            var v = Json.Parse(text);
            Assert.AreEqual(text.Trim(), v.ToJson());
            Assert.AreEqual("[ 1.50 , \"\\u0041\" , { } ]", v["a"].ToJson());
            Assert.AreEqual("1.50", v["a"][0].ToJson());
            Assert.AreEqual("\"\\u0041\"", v["a"][1].ToJson());
            Assert.AreEqual("A", v["a"][1].AsString);
            Assert.AreEqual("{ }", v["a"][2].ToJson());
            Assert.AreEqual("-0.0e+00", v["b"].ToJson());
            Assert.AreEqual(v.ToJson(), v.ToString());
        }

        [Test]
        public void EveryEscapeIsDecoded()
        {
            var v = Json.Parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20AC \\ud83d\\ude00\"");
            Assert.AreEqual("\" \\ / \b \f \n \r \t \u00e9 \u20ac \ud83d\ude00", v.AsString);
        }

        [Test]
        public void LoneSurrogateEscapesAreKeptAsJsonParseKeepsThem()
        {
            Assert.AreEqual("\ud800", Json.Parse("\"\\ud800\"").AsString);
            Assert.AreEqual("x\udc00y", Json.Parse("\"x\\udc00y\"").AsString);
            Assert.AreEqual("\"\\ud800\"", Json.Parse("\"\\ud800\"").ToNormalizedJson());
        }

        [Test]
        public void NonAsciiTextIsTakenAsItIs()
        {
            Assert.AreEqual("h\u00e9llo \u4e16\u754c \ud83d\ude00 \u2028", Json.Parse("\"h\u00e9llo \u4e16\u754c \ud83d\ude00 \u2028\"").AsString);
        }

        [Test]
        public void TheLastOfRepeatedKeysWinsAsInJsonParse()
        {
            var v = Json.Parse("{\"a\":1,\"b\":2,\"a\":3}");
            Assert.AreEqual(3.0, v["a"].AsNumber);
            Assert.AreEqual(3, v.Count);
            Assert.AreEqual("{\"a\":3,\"b\":2}", v.ToNormalizedJson());
        }

        [Test]
        public void LargeObjectsAreLookedUpThroughAnIndexWithTheSameAnswers()
        {
            var sb = new StringBuilder("{");
            for (int i = 0; i < 50; i++) sb.Append("\"k" + i + "\":" + i + ",");
            sb.Append("\"k7\":\"last\"}");
            var v = Json.Parse(sb.ToString());
            Assert.AreEqual(49.0, v["k49"].AsNumber);
            Assert.AreEqual("last", v["k7"].AsString);
            Assert.IsNull(v["k50"]);
            Assert.AreEqual(51, v.Count);
        }

        [TestCase("0", 0)]
        [TestCase("-7", -7)]
        [TestCase("2.0", 2)]
        [TestCase("2e0", 2)]
        [TestCase("25E-1", null)]
        [TestCase("1.5", null)]
        [TestCase("2147483647", 2147483647)]
        [TestCase("-2147483648", -2147483648)]
        [TestCase("2147483648", null)]
        [TestCase("1e300", null)]
        [TestCase("\"3\"", null)]
        [TestCase("true", null)]
        public void TryGetInt32TakesWholeNumbersInRange(string text, int? expected)
        {
            int value;
            bool ok = Json.Parse(text).TryGetInt32(out value);
            Assert.AreEqual(expected.HasValue, ok, text);
            if (expected.HasValue) Assert.AreEqual(expected.Value, value);
        }

        [Test]
        public void NumbersBeyondADoubleBecomeInfinitiesOrZeroAsInJavaScript()
        {
            Assert.AreEqual(double.PositiveInfinity, Json.Parse("1e400").AsNumber);
            Assert.AreEqual(double.NegativeInfinity, Json.Parse("-1e400").AsNumber);
            Assert.AreEqual(0.0, Json.Parse("1e-400").AsNumber);
            Assert.AreEqual(1e308, Json.Parse("1e308").AsNumber);
            // The text still passes through untouched.
            Assert.AreEqual("1e400", Json.Parse("1e400").ToJson());
            Assert.AreEqual("null", Json.Parse("1e400").ToNormalizedJson());
            Assert.AreEqual("123456789012345678901234567890", Json.Parse("123456789012345678901234567890").ToJson());
        }

        [TestCase("", "empty")]
        [TestCase("   ", "empty")]
        [TestCase("{", "end of text inside an object")]
        [TestCase("{\"a\"", "end of text inside an object")]
        [TestCase("{\"a\":", "end of text; expected a JSON value")]
        [TestCase("{\"a\":1", "end of text inside an object")]
        [TestCase("[1,2", "end of text inside an array")]
        [TestCase("[1,]", "expected a JSON value")]
        [TestCase("{\"a\":1,}", "expected a member name")]
        [TestCase("{a:1}", "expected a member name")]
        [TestCase("{'a':1}", "expected a member name")]
        [TestCase("{\"a\" 1}", "expected ':'")]
        [TestCase("[1 2]", "expected ',' or ']'")]
        [TestCase("{\"a\":1 \"b\":2}", "expected ',' or '}'")]
        [TestCase("01", "must not start with 0")]
        [TestCase("-", "digit after '-'")]
        [TestCase("-x", "digit after '-'")]
        [TestCase("1.", "digit after '.'")]
        [TestCase(".5", "unexpected character '.'")]
        [TestCase("+1", "unexpected character '+'")]
        [TestCase("1e", "digit in its exponent")]
        [TestCase("1e+", "digit in its exponent")]
        [TestCase("NaN", "unexpected character 'N'")]
        [TestCase("Infinity", "unexpected character 'I'")]
        [TestCase("tru", "expected a JSON value")]
        [TestCase("nul", "expected a JSON value")]
        [TestCase("True", "unexpected character 'T'")]
        [TestCase("\"abc", "end of text inside a string")]
        [TestCase("\"a\\", "end of text inside a string")]
        [TestCase("\"\\x\"", "invalid escape \\x")]
        [TestCase("\"\\u12\"", "four hex digits")]
        [TestCase("\"\\u12", "four hex digits")]
        [TestCase("\"\\uGGGG\"", "four hex digits")]
        [TestCase("\"a\tb\"", "control character")]
        [TestCase("\"a\nb\"", "control character")]
        [TestCase("\"a\u0000b\"", "control character")]
        [TestCase("1 2", "unexpected text after")]
        [TestCase("{} x", "unexpected text after")]
        [TestCase("// comment\n1", "unexpected character '/'")]
        [TestCase("\ufeff1", "U+FEFF")]
        [TestCase("\u00a01", "U+00A0")]
        [TestCase("[\u000b]", "U+000B")]
        public void InvalidTextIsRefusedWithAClearMessage(string text, string problem)
        {
            JsonValue v;
            string error;
            Assert.IsFalse(Json.TryParse(text, out v, out error));
            Assert.IsNull(v);
            StringAssert.Contains(problem, error);
            StringAssert.StartsWith("not valid JSON at offset ", error);
            Assert.IsFalse(Json.IsValid(text));
            var e = Assert.Throws<JsonException>(() => Json.Parse(text));
            Assert.AreEqual(error, e.Message);
            StringAssert.Contains(problem, e.Problem);
        }

        [Test]
        public void ErrorsSayWhereTheProblemIs()
        {
            var e = Assert.Throws<JsonException>(() => Json.Parse("{\"a\": [1, 2,, 3]}"));
            Assert.AreEqual(12, e.Offset);
            e = Assert.Throws<JsonException>(() => Json.Parse("[\"ok\", \"bad \\q\"]"));
            Assert.AreEqual(12, e.Offset);
            e = Assert.Throws<JsonException>(() => Json.Parse("[1] ]"));
            Assert.AreEqual(4, e.Offset);
        }

        [Test]
        public void JsonExceptionIsAFormatException()
        {
            Assert.Throws<JsonException>(() => Json.Parse("x"));
            Assert.IsInstanceOf<FormatException>(new JsonException("p", 1));
        }

        [Test]
        public void NullTextIsRefusedWithoutThrowingExceptFromParse()
        {
            JsonValue v;
            string error;
            Assert.IsFalse(Json.TryParse(null, out v, out error));
            StringAssert.Contains("null", error);
            Assert.IsFalse(Json.TryParse(null, out v));
            Assert.IsFalse(Json.IsValid(null));
            Assert.Throws<ArgumentNullException>(() => Json.Parse(null));
        }

        [Test]
        public void NestingUpToMaxDepthIsAcceptedAndDeeperIsRefused()
        {
            string ok = new string('[', Json.MaxDepth) + new string(']', Json.MaxDepth);
            Assert.IsTrue(Json.IsValid(ok));
            Assert.AreEqual(ok, Json.Parse(ok).ToNormalizedJson());
            string deep = new string('[', Json.MaxDepth + 1) + new string(']', Json.MaxDepth + 1);
            JsonValue v;
            string error;
            Assert.IsFalse(Json.TryParse(deep, out v, out error));
            StringAssert.Contains("nested deeper than 1000", error);
            // Far deeper text (a hostile message) is refused just as calmly.
            string hostile = new string('[', 200000);
            Assert.IsFalse(Json.TryParse(hostile, out v, out error));
            string objects = string.Concat(Enumerable.Repeat("{\"a\":", 200000));
            Assert.IsFalse(Json.IsValid(objects));
        }

        [TestCase("0")]
        [TestCase("-0")]
        [TestCase("[]")]
        [TestCase("{}")]
        [TestCase("\"\"")]
        [TestCase(" \t\r\n1 \t\r\n")]
        [TestCase("[[[[]]],{\"\":{}}]")]
        [TestCase("-1.5E-3")]
        [TestCase("1e+5")]
        [TestCase("{\"\":\"\"}")]
        [TestCase("\"\u007f\"")]
        public void ValidEdgeCasesAreAccepted(string text)
        {
            Assert.IsTrue(Json.IsValid(text), text);
            Assert.AreEqual(text.Trim(' ', '\t', '\r', '\n'), Json.Parse(text).ToJson());
        }

        // ---- building and writing ----

        [Test]
        public void BuiltValuesSerializeCompactly()
        {
            var v = JsonValue.NewObject()
                .Set("s", JsonValue.FromString("a\"b"))
                .Set("n", JsonValue.FromNumber(1.5))
                .Set("i", JsonValue.FromInteger(9007199254740993))
                .Set("b", JsonValue.FromBoolean(true))
                .Set("z", null)
                .Set("a", JsonValue.NewArray().Add(JsonValue.Null).Add(null).Add(Json.Parse(" [ 1 ] ")));
            Assert.AreEqual("{\"s\":\"a\\\"b\",\"n\":1.5,\"i\":9007199254740993,\"b\":true,\"z\":null,\"a\":[null,null,[ 1 ]]}", v.ToJson());
            v.Set("s", JsonValue.FromString("replaced"));
            Assert.AreEqual("replaced", v["s"].AsString);
            Assert.AreEqual(6, v.Count);
            Assert.AreEqual("null", JsonValue.FromString(null).ToJson());
        }

        [Test]
        public void SetReplacesAMemberAlsoAfterLookupsBuiltTheIndex()
        {
            var v = JsonValue.NewObject();
            for (int i = 0; i < 20; i++) v.Set("k" + i, JsonValue.FromInteger(i));
            Assert.AreEqual(5.0, v["k5"].AsNumber);
            v.Set("k5", JsonValue.FromString("five")).Set("k20", JsonValue.True);
            Assert.AreEqual("five", v["k5"].AsString);
            Assert.AreEqual(true, v["k20"].AsBoolean);
            Assert.AreEqual(21, v.Count);
            StringAssert.Contains("\"k4\":4,\"k5\":\"five\",\"k6\":6", v.ToJson());
        }

        [Test]
        public void ParsedValuesAreReadOnly()
        {
            var o = Json.Parse("{\"a\":[]}");
            Assert.Throws<InvalidOperationException>(() => o.Set("b", JsonValue.True));
            Assert.Throws<InvalidOperationException>(() => o["a"].Add(JsonValue.True));
            Assert.Throws<InvalidOperationException>(() => JsonValue.FromString("x").Add(JsonValue.True));
            Assert.Throws<InvalidOperationException>(() => JsonValue.NewArray().Set("k", JsonValue.True));
            Assert.Throws<ArgumentNullException>(() => JsonValue.NewObject().Set(null, JsonValue.True));
        }

        [Test]
        public void StringsAreEscapedAsJsonStringifyEscapesThem()
        {
            // Expected strings are JSON.stringify's output for the same input.
            Assert.AreEqual("\"\\\"\\\\/\\b\\f\\n\\r\\t\"", Json.Quote("\"\\/\b\f\n\r\t"));
            Assert.AreEqual("\"\\u0000\\u0001\\u001f \u007f\"", Json.Quote("\u0000\u0001\u001f \u007f"));
            Assert.AreEqual("\"\u00e9\u2028\u2029\ud83d\ude00\"", Json.Quote("\u00e9\u2028\u2029\ud83d\ude00"));
            Assert.AreEqual("\"\\ud800 \\udfff \\udc00\\ud800\"", Json.Quote("\ud800 \udfff \udc00\ud800"));
            Assert.AreEqual("\"<script>&'\"", Json.Quote("<script>&'"));
            Assert.AreEqual("null", Json.Quote(null));
        }

        [TestCase(0.0, "0")]
        [TestCase(-0.0, "0")]
        [TestCase(1.0, "1")]
        [TestCase(-42.0, "-42")]
        [TestCase(1.5, "1.5")]
        [TestCase(0.1, "0.1")]
        [TestCase(0.30000000000000004, "0.30000000000000004")]
        [TestCase(9007199254740991.0, "9007199254740991")]
        [TestCase(9007199254740992.0, "9007199254740992")]
        [TestCase(1e20, "100000000000000000000")]
        [TestCase(123456789012345678901.0, "123456789012345680000")]
        [TestCase(1e21, "1e+21")]
        [TestCase(-1.25e22, "-1.25e+22")]
        [TestCase(0.000001, "0.000001")]
        [TestCase(0.000012345, "0.000012345")]
        [TestCase(1e-7, "1e-7")]
        [TestCase(2.5, "2.5")]
        [TestCase(123.456, "123.456")]
        [TestCase(1.5e-7, "1.5e-7")]
        [TestCase(5e-324, "5e-324")]
        [TestCase(1.7976931348623157e308, "1.7976931348623157e+308")]
        [TestCase(double.NaN, "null")]
        [TestCase(double.PositiveInfinity, "null")]
        [TestCase(double.NegativeInfinity, "null")]
        public void NumbersAreWrittenSoJavaScriptReadsTheSameDouble(double d, string expected)
        {
            Assert.AreEqual(expected, JsonValue.FromNumber(d).ToJson());
        }

        [Test]
        public void EveryNumberFormatReadsBackToTheSameDouble()
        {
            var rng = new Prng(7);
            for (int i = 0; i < 5000; i++)
            {
                double d = BitConverter.Int64BitsToDouble((long)rng.Next64());
                if (double.IsNaN(d) || double.IsInfinity(d)) continue;
                string text = JsonValue.FromNumber(d).ToJson();
                Assert.IsTrue(Json.IsValid(text), text);
                double back = Json.Parse(text).AsNumber.Value;
                Assert.IsTrue(back == d, d.ToString("R") + " was written " + text);
            }
        }

        [Test]
        public void NormalizedJsonIsCompactAndStable()
        {
            var v = Json.Parse(" { \"a\" : [ 1.50 , \"\\u0041\\/\" , { } , 1E2 , -0 ] , \"b\" : true } ");
            Assert.AreEqual("{\"a\":[1.5,\"A/\",{},100,0],\"b\":true}", v.ToNormalizedJson());
            Assert.AreEqual(v.ToNormalizedJson(), Json.Parse(v.ToNormalizedJson()).ToNormalizedJson());
        }
    }

    /// <summary>xorshift64*: the same numbers on every runtime (System.Random's differ).</summary>
    public sealed class Prng
    {
        ulong state;

        public Prng(ulong seed)
        {
            state = seed * 2685821657736338717UL + 1;
        }

        public ulong Next64()
        {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            return state * 2685821657736338717UL;
        }

        /// <summary>0 .. bound-1.</summary>
        public int Below(int bound)
        {
            return (int)(Next64() % (ulong)bound);
        }
    }
}
