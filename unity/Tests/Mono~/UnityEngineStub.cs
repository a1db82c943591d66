// A stand-in for the few UnityEngine members the package's glue and sample use, so that
// build.sh can compile those files with Mono. It proves our C# compiles; it does not prove
// Unity has these members (they are long-standing public API: MonoBehaviour, GameObject,
// Object.DontDestroyOnLoad, Debug.Log, GUI/GUILayout, RuntimeInitializeOnLoadMethod,
// AddComponentMenu, Scripting.Preserve). Never shipped: this folder is hidden from Unity.
using System;

namespace UnityEngine
{
    public class Object
    {
        public static void DontDestroyOnLoad(Object target) { }
        public static void Destroy(Object target) { }

        // Unity overloads these so that a destroyed object compares equal to null; the glue
        // relies on that (RcadiaWebGLLink.Close), so the stub declares them too.
        public static bool operator ==(Object x, Object y) { return ReferenceEquals(x, y); }
        public static bool operator !=(Object x, Object y) { return !ReferenceEquals(x, y); }
        public override bool Equals(object other) { return ReferenceEquals(this, other); }
        public override int GetHashCode() { return base.GetHashCode(); }
    }

    public class Component : Object
    {
        public GameObject gameObject { get { return null; } }
    }

    public class Behaviour : Component
    {
        public bool enabled { get; set; }
    }

    public class MonoBehaviour : Behaviour
    {
    }

    public sealed class GameObject : Object
    {
        public GameObject(string name) { this.name = name; }
        public string name { get; set; }
        public T AddComponent<T>() where T : Component { return null; }
    }

    public static class Debug
    {
        public static void Log(object message) { }
        public static void LogWarning(object message) { }
    }

    public struct Rect
    {
        public Rect(float x, float y, float width, float height) { }
    }

    public static class GUILayout
    {
        public static void BeginArea(Rect screenRect) { }
        public static void EndArea() { }
        public static void BeginHorizontal() { }
        public static void EndHorizontal() { }
        public static void Label(string text) { }
        public static bool Button(string text, params GUILayoutOption[] options) { return false; }
        public static GUILayoutOption Width(float width) { return null; }
        public static GUILayoutOption Height(float height) { return null; }
    }

    public sealed class GUILayoutOption
    {
    }

    public enum RuntimeInitializeLoadType
    {
        AfterSceneLoad,
        BeforeSceneLoad,
    }

    [AttributeUsage(AttributeTargets.Method)]
    public sealed class RuntimeInitializeOnLoadMethodAttribute : Attribute
    {
        public RuntimeInitializeOnLoadMethodAttribute(RuntimeInitializeLoadType loadType) { }
    }

    [AttributeUsage(AttributeTargets.Class)]
    public sealed class AddComponentMenu : Attribute
    {
        public AddComponentMenu(string menuName) { }
    }
}

namespace UnityEngine.Scripting
{
    [AttributeUsage(AttributeTargets.All)]
    public sealed class PreserveAttribute : Attribute
    {
    }
}
