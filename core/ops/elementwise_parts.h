#pragma once
// Internal: the elementwise family is split by kind; registerElementwiseOps (elementwise.cpp) calls these.
namespace tessera {
class OpRegistry;
void registerUnaryOps(OpRegistry& r);       // math, activations, predicates (elementwise_unary.cpp)
void registerBinaryOps(OpRegistry& r);      // arithmetic, comparison, logic, Where, Clip, PRelu, variadic
void registerConversionOps(OpRegistry& r);  // Cast CastLike Identity Dropout (elementwise_cast.cpp)
void registerConstantOps(OpRegistry& r);    // Constant ConstantOfShape Shape Size Range (elementwise_constant.cpp)
}  // namespace tessera
