;; Issue 14 class 8: auto-run locations are protected.
(scenario "172-vscode-tasks-folder-open"
  (doc ".vscode/tasks.json with runOn folderOpen runs on opening the folder")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((fs-write ".vscode/tasks.json" "{\"version\":\"2.0.0\",\"tasks\":[{\"label\":\"x\",\"type\":\"shell\",\"command\":\"cat .env\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent ".vscode/tasks.json")))
