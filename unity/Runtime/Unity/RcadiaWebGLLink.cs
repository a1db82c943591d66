// The Unity glue: the only file of the package that uses UnityEngine. Everything it does is
// hand messages between the C# core (RcadiaAgent) and Plugins/WebGL/RcadiaBridge.jslib.
// Outside Unity (the Mono build and tests of this package) it compiles to nothing.
#if UNITY_5_3_OR_NEWER
using System;
using System.Runtime.InteropServices;
using UnityEngine;
using UnityEngine.Scripting;

namespace Rcadia.Agent
{
    /// <summary>
    /// The host link of a Unity game. In a WebGL build it posts to <c>window.parent</c> and
    /// receives the parent's messages through RcadiaBridge.jslib, which calls
    /// <see cref="ReceiveFromHost"/> with SendMessage. In the Editor and in other players there
    /// is no host page: outbound messages are logged, and <see cref="ReceiveFromHost"/> can be
    /// called by hand to play the host's part.
    /// </summary>
    [AddComponentMenu("")]
    [Preserve]
    public sealed class RcadiaWebGLLink : MonoBehaviour, IHostLink
    {
        // SendMessage finds its target by GameObject name, so every link gets its own.
        static int created;

        Action<string> receive;
#if UNITY_WEBGL && !UNITY_EDITOR
        int bridgeHandle;
#endif

        // Before the first scene loads, so `new RcadiaAgent(config)` works in any Awake/Start.
        [RuntimeInitializeOnLoadMethod(RuntimeInitializeLoadType.BeforeSceneLoad)]
        static void InstallAsDefault()
        {
            RcadiaAgent.DefaultHostLink = Create;
        }

        /// <summary>A new link on its own GameObject, kept across scene loads.</summary>
        public static RcadiaWebGLLink Create()
        {
            created++;
            var host = new GameObject("RcadiaHostLink" + created);
            DontDestroyOnLoad(host);
            return host.AddComponent<RcadiaWebGLLink>();
        }

        /// <inheritdoc />
        public void Open(Action<string> onMessage)
        {
            receive = onMessage;
#if UNITY_WEBGL && !UNITY_EDITOR
            if (bridgeHandle == 0) bridgeHandle = RcadiaBridge_Open(gameObject.name, "ReceiveFromHost");
#endif
        }

        /// <inheritdoc />
        public void Post(string messageJson)
        {
#if UNITY_WEBGL && !UNITY_EDITOR
            RcadiaBridge_Post(messageJson);
#else
            Debug.Log("[RCADIA] to host: " + messageJson);
#endif
        }

        /// <inheritdoc />
        public void Close()
        {
            receive = null;
#if UNITY_WEBGL && !UNITY_EDITOR
            if (bridgeHandle != 0) RcadiaBridge_Close(bridgeHandle);
            bridgeHandle = 0;
#endif
            // Its GameObject goes with it: Create makes one per agent and keeps it across
            // scene loads, so an agent made in Start and disposed in OnDestroy left one
            // behind with every scene reload.
            // `this != null` is Unity's overloaded check, false once this component is
            // destroyed: Close runs again after that when the agent is disposed later (its
            // GameObject was destroyed first, or on quit, when Unity destroys objects in any
            // order), and reading `gameObject` on a destroyed component throws
            // MissingReferenceException, so `gameObject != null` cannot be the test.
            if (this != null) Destroy(gameObject);
        }

        /// <summary>One message from the host as JSON text (the jslib calls this with SendMessage).</summary>
        [Preserve]
        public void ReceiveFromHost(string messageJson)
        {
            var r = receive;
            if (r != null) r(messageJson);
        }

        void OnDestroy()
        {
            Close();
        }

#if UNITY_WEBGL && !UNITY_EDITOR
        [DllImport("__Internal")]
        static extern int RcadiaBridge_Open(string objectName, string methodName);

        [DllImport("__Internal")]
        static extern void RcadiaBridge_Post(string messageJson);

        [DllImport("__Internal")]
        static extern void RcadiaBridge_Close(int handle);
#endif
    }
}
#endif
