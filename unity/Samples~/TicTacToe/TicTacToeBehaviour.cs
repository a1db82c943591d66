#if UNITY_5_3_OR_NEWER
using Rcadia.Agent;
using UnityEngine;

namespace Rcadia.Samples.TicTacToe
{
    /// <summary>
    /// The Unity part of the sample: put it on any GameObject of an empty scene and build for
    /// WebGL. Agents play; the page only shows the board.
    /// </summary>
    public sealed class TicTacToeBehaviour : MonoBehaviour
    {
        RcadiaAgent agent;
        TicTacToeTable table;

        void Start()
        {
            agent = new RcadiaAgent(TicTacToeTable.Config());
            table = new TicTacToeTable(agent);
        }

        void OnDestroy()
        {
            if (agent != null) agent.Dispose();
        }

        void OnGUI()
        {
            if (table == null) return;
            GUILayout.BeginArea(new Rect(16, 16, 320, 320));
            GUILayout.Label("RCADIA tic-tac-toe");
            GUILayout.Label(table.Status);
            string board = table.Rules.Board;
            for (int row = 0; row < 3; row++)
            {
                GUILayout.BeginHorizontal();
                for (int col = 0; col < 3; col++)
                    GUILayout.Label(board[row * 3 + col].ToString());
                GUILayout.EndHorizontal();
            }
            GUILayout.EndArea();
        }
    }
}
#endif
