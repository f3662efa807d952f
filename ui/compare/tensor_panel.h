#pragma once
// The tensor panel: the selected edge's value after a run that kept values (Run > Keep tensor values) — shape,
// dtype, min, max, mean, standard deviation, NaN and Inf counts, a histogram, a 2-D slice at chosen indices of
// the leading dimensions, its error against the reference interpreter (max absolute and relative, and where),
// and export as .npy.
#include <QWidget>
#include <optional>

#include "compare/tensor_values.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace tessera::ui {

class SessionController;
class HistogramView;
struct Selection;

class TensorPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TensorPanel(SessionController* controller, QWidget* parent = nullptr);

  // Shows value `name` of the last run; false (and says why in the panel) when the run holds none.
  bool showValue(const QString& name);
  QString valueName() const { return name_; }
  // What is shown (empty before a value is): its statistics and its error against the reference.
  const std::optional<compare::TensorStats>& stats() const { return stats_; }
  const std::optional<compare::TensorError>& error() const { return error_; }
  QTableWidget* sliceTable() const { return slice_; }
  // Leading indices of the slice ("0,2"), then redraws it.
  void setSliceIndices(const QString& indices);
  // Writes the shown value as .npy; "" on success, else why not.
  QString exportNpy(const QString& path);

 private:
  void onSelection(const Selection& s);
  void showSlice();
  const Tensor* shownTensor() const;

  SessionController* controller_;
  QLabel *title_, *statsText_, *errorText_;
  HistogramView* histogram_;
  QLineEdit* indices_;
  QTableWidget* slice_;
  QPushButton* export_;
  QString name_;
  std::optional<compare::TensorStats> stats_;
  std::optional<compare::TensorError> error_;
};

}  // namespace tessera::ui
