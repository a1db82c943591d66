using System;
using System.Collections.Generic;
using System.Globalization;

namespace Rcadia.Agent
{
    /// <summary>The six kinds of JSON value.</summary>
    public enum JsonKind
    {
        Null,
        Boolean,
        Number,
        String,
        Array,
        Object,
    }

    /// <summary>
    /// One JSON value: parsed with <see cref="Json.Parse"/>, or built with the factory methods.
    /// A parsed value remembers its exact source text, which <see cref="ToJson"/> returns, so a
    /// game's actions and states pass through the SDK unchanged. Parsed values are read-only;
    /// the accessors never throw: asking a value for the wrong kind gives null, 0 or an empty
    /// sequence.
    /// </summary>
    public sealed class JsonValue
    {
        // Objects with more members than this get a key index on the first lookup; smaller
        // ones are searched from the end (the last duplicate key wins, as in JSON.parse).
        const int IndexThreshold = 8;

        static readonly KeyValuePair<string, JsonValue>[] NoMembers = new KeyValuePair<string, JsonValue>[0];
        static readonly JsonValue[] NoItems = new JsonValue[0];

        /// <summary>The JSON literal null.</summary>
        public static readonly JsonValue Null = new JsonValue(JsonKind.Null, "null");
        /// <summary>The JSON literal true.</summary>
        public static readonly JsonValue True = new JsonValue(JsonKind.Boolean, "true") { boolean = true };
        /// <summary>The JSON literal false.</summary>
        public static readonly JsonValue False = new JsonValue(JsonKind.Boolean, "false");

        readonly JsonKind kind;
        bool boolean;
        double number;
        string text; // the value of a string
        List<JsonValue> items;
        List<KeyValuePair<string, JsonValue>> members;
        Dictionary<string, JsonValue> index;

        // Source text for parsed values (and numbers built from integers), else null.
        string source;
        int sourceStart;
        int sourceLength;
        readonly bool readOnly;

        JsonValue(JsonKind kind, string literal)
        {
            this.kind = kind;
            source = literal;
            sourceLength = literal.Length;
            readOnly = true;
        }

        JsonValue(JsonKind kind, bool readOnly)
        {
            this.kind = kind;
            this.readOnly = readOnly;
        }

        // ---- building ----

        /// <summary>A JSON string.</summary>
        public static JsonValue FromString(string value)
        {
            if (value == null) return Null;
            return new JsonValue(JsonKind.String, true) { text = value };
        }

        /// <summary>A JSON number. NaN and infinities become null, as JSON.stringify does.</summary>
        public static JsonValue FromNumber(double value)
        {
            if (double.IsNaN(value) || double.IsInfinity(value)) return Null;
            return new JsonValue(JsonKind.Number, true) { number = value };
        }

        /// <summary>A JSON number written with every digit (also beyond 2^53).</summary>
        public static JsonValue FromInteger(long value)
        {
            var v = new JsonValue(JsonKind.Number, true) { number = value };
            v.source = value.ToString(CultureInfo.InvariantCulture);
            v.sourceLength = v.source.Length;
            return v;
        }

        /// <summary>true or false.</summary>
        public static JsonValue FromBoolean(bool value)
        {
            return value ? True : False;
        }

        /// <summary>An empty array to <see cref="Add"/> to.</summary>
        public static JsonValue NewArray()
        {
            return new JsonValue(JsonKind.Array, false) { items = new List<JsonValue>() };
        }

        /// <summary>An empty object to <see cref="Set"/> members of.</summary>
        public static JsonValue NewObject()
        {
            return new JsonValue(JsonKind.Object, false) { members = new List<KeyValuePair<string, JsonValue>>() };
        }

        /// <summary>Appends to a built array. Returns this array, to chain calls.</summary>
        /// <exception cref="InvalidOperationException">this is not an array built with <see cref="NewArray"/>.</exception>
        public JsonValue Add(JsonValue item)
        {
            if (kind != JsonKind.Array || readOnly)
                throw new InvalidOperationException("Add works on arrays made with JsonValue.NewArray(); parsed values are read-only");
            items.Add(item ?? Null);
            return this;
        }

        /// <summary>Sets a member of a built object (replacing one of the same name). Returns this object.</summary>
        /// <exception cref="InvalidOperationException">this is not an object built with <see cref="NewObject"/>.</exception>
        /// <exception cref="ArgumentNullException">key is null.</exception>
        public JsonValue Set(string key, JsonValue value)
        {
            if (kind != JsonKind.Object || readOnly)
                throw new InvalidOperationException("Set works on objects made with JsonValue.NewObject(); parsed values are read-only");
            if (key == null) throw new ArgumentNullException("key");
            var member = new KeyValuePair<string, JsonValue>(key, value ?? Null);
            int at = members.FindIndex(m => string.Equals(m.Key, key, StringComparison.Ordinal));
            if (at >= 0) members[at] = member;
            else members.Add(member);
            if (index != null) index[key] = member.Value;
            return this;
        }

        // ---- made by the parser ----

        internal static JsonValue ParsedString(string value)
        {
            return new JsonValue(JsonKind.String, true) { text = value };
        }

        internal static JsonValue ParsedNumber(double value)
        {
            return new JsonValue(JsonKind.Number, true) { number = value };
        }

        internal static JsonValue ParsedArray(List<JsonValue> items)
        {
            return new JsonValue(JsonKind.Array, true) { items = items };
        }

        internal static JsonValue ParsedObject(List<KeyValuePair<string, JsonValue>> members)
        {
            return new JsonValue(JsonKind.Object, true) { members = members };
        }

        internal JsonValue WithSource(string text, int start, int length)
        {
            source = text;
            sourceStart = start;
            sourceLength = length;
            return this;
        }

        // ---- reading ----

        /// <summary>Which kind of value this is.</summary>
        public JsonKind Kind { get { return kind; } }

        /// <summary>True for the JSON literal null.</summary>
        public bool IsNull { get { return kind == JsonKind.Null; } }

        /// <summary>The string, or null when this is not a string.</summary>
        public string AsString { get { return kind == JsonKind.String ? text : null; } }

        /// <summary>The boolean, or null when this is not true or false.</summary>
        public bool? AsBoolean { get { return kind == JsonKind.Boolean ? boolean : (bool?)null; } }

        /// <summary>The number, or null when this is not a number. A number too large for a double is an infinity.</summary>
        public double? AsNumber { get { return kind == JsonKind.Number ? number : (double?)null; } }

        /// <summary>The number as an int when it is a whole number in int's range (2, 2.0 and 2e0 all are).</summary>
        public bool TryGetInt32(out int value)
        {
            value = 0;
            if (kind != JsonKind.Number || number != Math.Floor(number)) return false;
            if (number < int.MinValue || number > int.MaxValue) return false;
            value = (int)number;
            return true;
        }

        /// <summary>The number of array items or object members; 0 for other kinds.</summary>
        public int Count
        {
            get
            {
                if (kind == JsonKind.Array) return items.Count;
                if (kind == JsonKind.Object) return members.Count;
                return 0;
            }
        }

        /// <summary>An array item, or null when this is not an array or the index is out of range.</summary>
        public JsonValue this[int position]
        {
            get
            {
                if (kind != JsonKind.Array || position < 0 || position >= items.Count) return null;
                return items[position];
            }
        }

        /// <summary>
        /// An object member, or null (not <see cref="Null"/>) when there is none or this is not
        /// an object. With duplicate keys the last one wins, as in JSON.parse.
        /// </summary>
        public JsonValue this[string key]
        {
            get
            {
                if (kind != JsonKind.Object || key == null) return null;
                if (members.Count > IndexThreshold)
                {
                    if (index == null)
                    {
                        index = new Dictionary<string, JsonValue>(members.Count, StringComparer.Ordinal);
                        foreach (var m in members) index[m.Key] = m.Value;
                    }
                    JsonValue found;
                    return index.TryGetValue(key, out found) ? found : null;
                }
                for (int i = members.Count - 1; i >= 0; i--)
                {
                    if (string.Equals(members[i].Key, key, StringComparison.Ordinal)) return members[i].Value;
                }
                return null;
            }
        }

        /// <summary>The items of an array; empty for other kinds.</summary>
        public IEnumerable<JsonValue> Items
        {
            get { return kind == JsonKind.Array ? (IEnumerable<JsonValue>)items.AsReadOnly() : NoItems; }
        }

        /// <summary>The members of an object in source order (duplicates included); empty for other kinds.</summary>
        public IEnumerable<KeyValuePair<string, JsonValue>> Members
        {
            get { return kind == JsonKind.Object ? (IEnumerable<KeyValuePair<string, JsonValue>>)members.AsReadOnly() : NoMembers; }
        }

        // ---- writing ----

        /// <summary>
        /// The JSON text: for a parsed value its exact source text (without surrounding
        /// whitespace), for a built value a compact serialization.
        /// </summary>
        public string ToJson()
        {
            if (source != null) return source.Substring(sourceStart, sourceLength);
            var w = new JsonWriter();
            WriteTo(w, false);
            return w.ToString();
        }

        /// <summary>
        /// A compact serialization in the form JSON.stringify gives (its string escapes and
        /// number forms; a repeated key once, with its last value): the same value as
        /// <c>JSON.stringify(JSON.parse(text))</c> for the text this was parsed from. Members
        /// stay in source order (JavaScript moves integer-like keys to the front).
        /// </summary>
        public string ToNormalizedJson()
        {
            var w = new JsonWriter();
            WriteTo(w, true);
            return w.ToString();
        }

        /// <summary>Same as <see cref="ToJson"/>.</summary>
        public override string ToString()
        {
            return ToJson();
        }

        internal void WriteTo(JsonWriter w, bool normalize)
        {
            if (!normalize && source != null)
            {
                w.RawValidated(source, sourceStart, sourceLength);
                return;
            }
            switch (kind)
            {
                case JsonKind.Null:
                    w.Null();
                    break;
                case JsonKind.Boolean:
                    w.Boolean(boolean);
                    break;
                case JsonKind.Number:
                    w.Number(number);
                    break;
                case JsonKind.String:
                    w.String(text);
                    break;
                case JsonKind.Array:
                    w.BeginArray();
                    foreach (var item in items) item.WriteTo(w, normalize);
                    w.EndArray();
                    break;
                case JsonKind.Object:
                    w.BeginObject();
                    if (normalize)
                    {
                        // JSON.parse keeps the first position of a repeated key and its last value.
                        var seen = new HashSet<string>(StringComparer.Ordinal);
                        foreach (var m in members)
                        {
                            if (!seen.Add(m.Key)) continue;
                            w.Name(m.Key);
                            this[m.Key].WriteTo(w, true);
                        }
                    }
                    else
                    {
                        foreach (var m in members)
                        {
                            w.Name(m.Key);
                            m.Value.WriteTo(w, false);
                        }
                    }
                    w.EndObject();
                    break;
            }
        }
    }
}
