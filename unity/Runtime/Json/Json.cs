using System;
using System.Text;

namespace Rcadia.Agent
{
    /// <summary>Reading and quoting JSON text.</summary>
    public static class Json
    {
        /// <summary>
        /// How deeply arrays and objects may nest. Deeper text is refused (JSON itself sets no
        /// limit) so that code walking a parsed value recursively cannot run out of stack,
        /// which in a WebGL build is small.
        /// </summary>
        public const int MaxDepth = 1000;

        /// <summary>Parses one JSON value (surrounding whitespace allowed).</summary>
        /// <exception cref="ArgumentNullException">text is null.</exception>
        /// <exception cref="JsonException">text is not JSON; the message says what and where.</exception>
        public static JsonValue Parse(string text)
        {
            if (text == null) throw new ArgumentNullException("text");
            string error;
            int at;
            JsonValue v = JsonParser.Parse(text, true, out error, out at);
            if (error != null) throw new JsonException(error, at);
            return v;
        }

        /// <summary>Parses one JSON value; never throws. On failure value is null.</summary>
        public static bool TryParse(string text, out JsonValue value)
        {
            string error;
            return TryParse(text, out value, out error);
        }

        /// <summary>Parses one JSON value; never throws. On failure value is null and error says what and where.</summary>
        public static bool TryParse(string text, out JsonValue value, out string error)
        {
            value = null;
            if (text == null)
            {
                error = "the text is null";
                return false;
            }
            int at;
            value = JsonParser.Parse(text, true, out error, out at);
            if (error == null) return true;
            error = JsonException.Describe(error, at);
            return false;
        }

        /// <summary>Whether text is exactly one JSON value (surrounding whitespace allowed); never throws.</summary>
        public static bool IsValid(string text)
        {
            return Validate(text) == null;
        }

        /// <summary>Null when text is one JSON value, else what is wrong with it and where.</summary>
        internal static string Validate(string text)
        {
            if (text == null) return "the text is null";
            string error;
            int at;
            JsonParser.Parse(text, false, out error, out at);
            return error == null ? null : JsonException.Describe(error, at);
        }

        /// <summary>A JSON string literal for value, escaped as JSON.stringify does ("null" for null).</summary>
        public static string Quote(string value)
        {
            if (value == null) return "null";
            var sb = new StringBuilder(value.Length + 2);
            JsonWriter.AppendString(sb, value);
            return sb.ToString();
        }
    }

    /// <summary>Text given to <see cref="Json.Parse"/> is not JSON.</summary>
    public sealed class JsonException : FormatException
    {
        /// <summary>Where in the text (a 0-based UTF-16 offset) the problem was found.</summary>
        public int Offset { get; private set; }

        /// <summary>What is wrong, without the position.</summary>
        public string Problem { get; private set; }

        public JsonException(string problem, int offset)
            : base(Describe(problem, offset))
        {
            Problem = problem;
            Offset = offset;
        }

        internal static string Describe(string problem, int offset)
        {
            return "not valid JSON at offset " + offset + ": " + problem;
        }
    }
}
