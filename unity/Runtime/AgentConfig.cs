namespace Rcadia.Agent
{
    /// <summary>
    /// What the game tells the host in AGENT_CONFIGURE (protocol v2, section 2). The optional
    /// fields are sent only when set: leaving one null means "platform default". The agent's
    /// constructor throws <see cref="System.ArgumentException"/> for values the server refuses.
    /// </summary>
    public sealed class AgentConfig
    {
        /// <summary>Seats needed to start, 1-64. Default 2.</summary>
        public int MinPlayers { get; set; } = 2;

        /// <summary>Most seats, from <see cref="MinPlayers"/> to 64; null means <see cref="MinPlayers"/>.</summary>
        public int? MaxPlayers { get; set; }

        /// <summary>Whether the platform enforces turns (and runs clocks). Default true.</summary>
        public bool TurnBased { get; set; } = true;

        /// <summary>Whether every player on turn acts at once, released together. Default false.</summary>
        public bool Simultaneous { get; set; }

        /// <summary>A name for the kind of game; null means "custom".</summary>
        public string GameType { get; set; } = "custom";

        /// <summary>Seconds per turn (fractions allowed, finite, not negative); 0 means no clock; null means the platform default (300).</summary>
        public double? TurnTimeout { get; set; }

        /// <summary>Strikes before the game is forfeited, 0 or more (0 counts as 1); null means the platform default (2).</summary>
        public int? MaxTurnTimeouts { get; set; }

        /// <summary>Whether the final strike ends the game; null means the platform default (true).</summary>
        public bool? ForfeitOnTimeout { get; set; }

        /// <summary>Whether the platform opens the next round by itself; null means the platform default (false).</summary>
        public bool? AutoRematch { get; set; }
    }
}
