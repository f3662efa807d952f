#pragma once
// A step's caption: Markdown whose figures come from the session as it is now, never from the lesson file, so
// a caption cannot go stale when the compiler changes. A figure is written {NAME} or {NAME:ARG}:
//   {nodes} {kernels} {steps}    nodes and kernels at the step shown, pipeline rows
//   {step}                       the title of the step shown
//   {pass:NAME}                  what pass NAME changed (nodes added, removed, rewritten, its statistics)
//   {kernel:NODE}                the kernel of NODE: id, kind and its nodes
//   {params:NODE}                its template parameters; {predicted:NODE} the cost model's estimate
//   {measured:NODE}              its time in the last run, against the prediction
//   {overrides}                  every override with what the compile made of it (rule, detail)
//   {run}                        the last run's summary (fused against unfused, verification)
//   {device}                     what the estimates assume
// Links: [text](node:ID) selects a node, [text](panel:NAME) opens a panel.
#include <QString>
#include <QStringList>

namespace tessera::ui {

class SessionController;

// The caption with its figures filled in; an unknown figure reads "⟨no figure NAME⟩" and is listed in `unknown`.
QString fillFigures(const QString& markdown, const SessionController& session, QStringList* unknown = nullptr);
// The node ids a caption links to (`[text](node:ID)`), in order, each once: the nodes its step spotlights.
QStringList nodeLinks(const QString& markdown);
// Markdown as an HTML fragment (what the caption view and the exported page show).
QString markdownToHtml(const QString& markdown);

}  // namespace tessera::ui
