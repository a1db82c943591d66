using System;
using System.Globalization;
using System.Numerics;
using System.Text;

namespace Rcadia.Agent
{
    /// <summary>
    /// Decimal text to double and back exactly as JavaScript does it, on any runtime: reading
    /// rounds correctly (Mono's double.Parse can be one unit off for long inputs), and writing
    /// gives Number.prototype.toString's digits. Exact arithmetic with BigInteger where the
    /// fast paths cannot be sure.
    /// </summary>
    internal static class JsonNumbers
    {
        // Enough digits to decide any rounding of a double (768 can matter); more are folded
        // into one sticky digit, so hostile inputs with a million digits stay cheap.
        const int MaxDigits = 800;

        static readonly double[] ExactPowersOfTen =
        {
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
        };

        static readonly BigInteger Two53 = BigInteger.One << 53;
        static readonly BigInteger Two54 = BigInteger.One << 54;

        /// <summary>The double nearest to a JSON number (grammar already checked), ties to even.</summary>
        public static double Parse(string s, int start, int end)
        {
            int i = start;
            bool negative = s[i] == '-';
            if (negative) i++;
            var digits = new StringBuilder();
            long exp10 = 0;
            bool sticky = false;
            bool leading = true;
            bool fraction = false;
            for (; i < end; i++)
            {
                char c = s[i];
                if (c == '.')
                {
                    fraction = true;
                    continue;
                }
                if (c == 'e' || c == 'E') break;
                if (fraction) exp10--;
                if (leading && c == '0') continue;
                leading = false;
                if (digits.Length < MaxDigits)
                {
                    digits.Append(c);
                }
                else
                {
                    exp10++; // a dropped digit still counts for the magnitude
                    if (c != '0') sticky = true;
                }
            }
            if (i < end)
            {
                i++; // e
                bool negativeExponent = false;
                if (s[i] == '+' || s[i] == '-')
                {
                    negativeExponent = s[i] == '-';
                    i++;
                }
                long e = 0;
                for (; i < end; i++)
                {
                    if (e < 1000000000L) e = e * 10 + (s[i] - '0'); // beyond this the value is 0 or infinite anyway
                }
                exp10 += negativeExponent ? -e : e;
            }
            if (sticky) digits.Append('1');
            double magnitude = FromDecimal(digits.ToString(), exp10);
            return negative ? -magnitude : magnitude;
        }

        /// <summary>digits (no leading zeros; empty for zero) x 10^exp10, correctly rounded.</summary>
        static double FromDecimal(string digits, long exp10)
        {
            int trailing = 0;
            while (trailing < digits.Length && digits[digits.Length - 1 - trailing] == '0') trailing++;
            if (trailing == digits.Length) return 0.0;
            digits = digits.Substring(0, digits.Length - trailing);
            exp10 += trailing;
            int k = digits.Length;
            // The value lies in [10^(k-1+exp10), 10^(k+exp10)).
            if (k - 1 + exp10 > 308) return double.PositiveInfinity;
            if (k + exp10 < -324) return 0.0;
            if (k <= 15 && exp10 >= -22 && exp10 <= 22)
            {
                // Both operands are exact doubles, so one correctly rounded operation.
                double v = long.Parse(digits, CultureInfo.InvariantCulture);
                return exp10 >= 0 ? v * ExactPowersOfTen[exp10] : v / ExactPowersOfTen[-exp10];
            }
            BigInteger d = BigInteger.Parse(digits, CultureInfo.InvariantCulture);
            BigInteger num = exp10 >= 0 ? d * BigInteger.Pow(10, (int)exp10) : d;
            BigInteger den = exp10 >= 0 ? BigInteger.One : BigInteger.Pow(10, (int)-exp10);
            return RoundQuotient(num, den);
        }

        /// <summary>num / den (both positive) rounded to the nearest double, ties to even.</summary>
        static double RoundQuotient(BigInteger num, BigInteger den)
        {
            // q = floor(num / den / 2^shift) with 54 bits: 53 for the double and one to round
            // with; subnormals have a fixed last bit of 2^-1074.
            const int minShift = -1075;
            int shift = Math.Max(minShift, BitLength(num) - BitLength(den) - 54);
            BigInteger q, rem;
            while (true)
            {
                q = shift >= 0 ? BigInteger.DivRem(num, den << shift, out rem) : BigInteger.DivRem(num << -shift, den, out rem);
                if (q >= Two54) shift++;
                else if (q < Two53 && shift > minShift) shift--;
                else break;
            }
            bool roundBit = !q.IsEven;
            BigInteger mantissa = q >> 1;
            int exponent = shift + 1; // of the mantissa's last bit
            if (roundBit && (!rem.IsZero || !mantissa.IsEven)) mantissa += 1;
            if (mantissa == Two53)
            {
                mantissa >>= 1;
                exponent++;
            }
            long m = (long)mantissa;
            if (m < (1L << 52)) return BitConverter.Int64BitsToDouble(m); // subnormal (exponent is -1074)
            long biased = exponent + 52 + 1023;
            if (biased >= 2047) return double.PositiveInfinity;
            return BitConverter.Int64BitsToDouble((biased << 52) | (m - (1L << 52)));
        }

        static int BitLength(BigInteger x)
        {
            byte[] bytes = x.ToByteArray(); // little-endian two's complement; x > 0
            int top = bytes.Length - 1;
            while (top > 0 && bytes[top] == 0) top--;
            int bits = top * 8;
            for (int b = bytes[top]; b != 0; b >>= 1) bits++;
            return bits;
        }

        /// <summary>
        /// JavaScript's Number.prototype.toString for a finite, non-zero double: the fewest
        /// significant digits that read back as d (the nearest such if several), then placed
        /// as in full below 1e21 and from 1e-6, with an exponent (1e+21, 1.5e-7) beyond.
        /// </summary>
        public static string Format(double d)
        {
            bool negative = d < 0;
            double abs = Math.Abs(d);
            string digits;
            long exp10;
            Shortest(abs, out digits, out exp10);
            int k = digits.Length;
            long n = k + exp10; // abs = 0.digits x 10^n
            var sb = new StringBuilder();
            if (negative) sb.Append('-');
            if (k <= n && n <= 21)
            {
                sb.Append(digits).Append('0', (int)(n - k));
            }
            else if (0 < n && n <= 21)
            {
                sb.Append(digits, 0, (int)n).Append('.').Append(digits, (int)n, k - (int)n);
            }
            else if (-6 < n && n <= 0)
            {
                sb.Append("0.").Append('0', (int)-n).Append(digits);
            }
            else
            {
                sb.Append(digits[0]);
                if (k > 1) sb.Append('.').Append(digits, 1, k - 1);
                long e = n - 1;
                sb.Append('e').Append(e >= 0 ? '+' : '-').Append(Math.Abs(e).ToString(CultureInfo.InvariantCulture));
            }
            return sb.ToString();
        }

        // The shortest digits (no trailing zeros) and exponent with digits x 10^exp10 == d.
        static void Shortest(double d, out string digits, out long exp10)
        {
            long bits = BitConverter.DoubleToInt64Bits(d);
            int biased = (int)((bits >> 52) & 0x7ff);
            long fraction = bits & ((1L << 52) - 1);
            long m = biased == 0 ? fraction : fraction | (1L << 52);
            int e = biased == 0 ? -1074 : biased - 1075;
            // d = num / den exactly.
            BigInteger num = e >= 0 ? new BigInteger(m) << e : new BigInteger(m);
            BigInteger den = e >= 0 ? BigInteger.One : BigInteger.One << -e;
            // n with 10^(n-1) <= d < 10^n; the logarithm is only a first guess.
            int n = (int)Math.Floor(Math.Log10(d)) + 1;
            while (Compare(num, den, n - 1) < 0) n--;
            while (Compare(num, den, n) >= 0) n++;
            // A candidate reads back as d when it lies inside d's rounding interval: within half
            // the gap to each neighbour (the gap below is half as wide at a power of two), on
            // the boundary only when m is even (ties round to even).
            bool narrowBelow = fraction == 0 && biased > 1;
            bool evenM = (m & 1) == 0;
            for (int p = 1; p <= 17; p++)
            {
                // d x 10^(p-n) = low + rem / scaledDen, with low a p-digit number.
                BigInteger up = p - n >= 0 ? BigInteger.Pow(10, p - n) : BigInteger.One;
                BigInteger scaledDen = p - n >= 0 ? den : den * BigInteger.Pow(10, n - p);
                BigInteger rem;
                BigInteger low = BigInteger.DivRem(num * up, scaledDen, out rem);
                // The gap 2^e to the next double, scaled by 10^(p-n) and in units of 1/scaledDen, like rem.
                BigInteger gap = e >= 0 ? (BigInteger.One << e) * up : up;
                // distance < gap / 2 (or gap / 4 below a power of two), everything times 4.
                BigInteger gapBelow = narrowBelow ? gap : gap * 2;
                BigInteger gapAbove = gap * 2;
                BigInteger below = rem * 4;
                BigInteger above = (scaledDen - rem) * 4;
                int cmpLow = below.CompareTo(gapBelow);
                int cmpHigh = above.CompareTo(gapAbove);
                bool lowOk = rem.IsZero || cmpLow < 0 || (cmpLow == 0 && evenM);
                bool highOk = !rem.IsZero && (cmpHigh < 0 || (cmpHigh == 0 && evenM));
                if (!lowOk && !highOk) continue;
                bool useHigh;
                if (lowOk && highOk)
                {
                    int cmp = (rem * 2).CompareTo(scaledDen);
                    useHigh = cmp > 0 || (cmp == 0 && !low.IsEven);
                }
                else
                {
                    useHigh = highOk;
                }
                Trim(useHigh ? low + 1 : low, n - p, out digits, out exp10);
                return;
            }
            throw new InvalidOperationException("no 17-digit form reads back as " + d.ToString("R", CultureInfo.InvariantCulture)); // not reached
        }

        // Sign of num/den - 10^power.
        static int Compare(BigInteger num, BigInteger den, int power)
        {
            return power >= 0
                ? num.CompareTo(den * BigInteger.Pow(10, power))
                : (num * BigInteger.Pow(10, -power)).CompareTo(den);
        }

        static void Trim(BigInteger value, long exp, out string digits, out long exp10)
        {
            string s = value.ToString(CultureInfo.InvariantCulture);
            int end = s.Length;
            while (end > 1 && s[end - 1] == '0') end--;
            digits = s.Substring(0, end);
            exp10 = exp + (s.Length - end);
        }
    }
}
