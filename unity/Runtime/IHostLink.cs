using System;

namespace Rcadia.Agent
{
    /// <summary>
    /// The pipe between a game and its host (the page around the game's frame). In a WebGL
    /// build it is <c>RcadiaWebGLLink</c>, backed by Plugins/WebGL/RcadiaBridge.jslib; tests
    /// and other runtimes supply their own.
    /// </summary>
    public interface IHostLink
    {
        /// <summary>
        /// Start delivering the host's messages, each as the JSON text of <c>{ type, data }</c>.
        /// The link must deliver only messages from the host (in a browser: whose
        /// <c>event.source</c> is <c>window.parent</c>), on the thread the agent is used on.
        /// </summary>
        void Open(Action<string> onMessage);

        /// <summary>Send one message, the JSON text of <c>{ type, data }</c>, to the host.</summary>
        void Post(string messageJson);

        /// <summary>Stop delivering messages.</summary>
        void Close();
    }
}
