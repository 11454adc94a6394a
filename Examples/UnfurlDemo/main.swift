import Foundation
import OperationBridge

print("OperationBridge demo")
